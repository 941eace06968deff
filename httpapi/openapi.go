package httpapi

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// openAPIDocument is the OpenAPI 3.1 description of every route, served at
// GET /openapi.json. The tests of openapi_test.go and
// openapi_answers_test.go hold it to the server: a route missing from it,
// an operation in it the server does not answer, or an answer that does
// not match it fails them (docs/openapi.md).
//
//go:embed openapi.json
var openAPIDocument []byte

func (s *server) openAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPIDocument)
}
