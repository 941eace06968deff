//go:build pprof

package main

import (
	"net/http"
	_ "net/http/pprof" // the profiles, on http.DefaultServeMux
	"os"
)

// Built only with -tags pprof, for measurements (bench/cmd/manytags
// -profile): net/http/pprof's handlers on the address LEAF_PPROF_ADDR
// names, beside the service. The service's own mux never serves them.
func init() {
	addr := os.Getenv("LEAF_PPROF_ADDR")
	if addr == "" {
		return
	}
	go func() { _ = http.ListenAndServe(addr, nil) }()
}
