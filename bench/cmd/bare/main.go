// Command bare serves a constant from a bare net/http handler: the ceiling
// that scripts/loadtest.sh measures leaf's id routes against, on the same
// machine in the same run. It is not part of the service.
package main

import (
	"flag"
	"log"
	"net/http"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18081", "listen address")
	flag.Parse()
	body := []byte("1234567890123")
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		_, _ = w.Write(body)
	})
	log.Fatal(http.ListenAndServe(*addr, nil))
}
