package client_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/leafid/leaf/client"
	"github.com/leafid/leaf/httpapi"
)

// TestCodesMatchServer: every error code of the server has a sentinel of
// its own here, and the client knows no code the server does not send.
// The server's list comes from httpapi, which only this test imports: the
// client itself stays free of it (TestStandardLibraryOnly).
func TestCodesMatchServer(t *testing.T) {
	server := httpapi.ErrorCodes()
	known := client.Sentinels()
	for _, code := range server {
		if known[code] == nil {
			t.Errorf("the server's code %s has no sentinel in the client", code)
		}
	}
	owner := map[error]string{}
	for code, sentinel := range known {
		if !slices.Contains(server, code) {
			t.Errorf("the client knows the code %s, which the server does not send", code)
		}
		if other, dup := owner[sentinel]; dup {
			t.Errorf("the codes %s and %s share the sentinel %v", code, other, sentinel)
		}
		owner[sentinel] = code
		// A status that would say otherwise: the code decides.
		if err := (&client.Error{Status: 418, Code: code}); !errors.Is(err, sentinel) {
			t.Errorf("an answer with the code %s is not %v", code, sentinel)
		}
	}
}
