package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/service"
)

func tokenSum(token string) [32]byte { return service.NewToken(token) }

// requireToken admits a request carrying the admin token, and marks it
// with the token's fingerprint for the trail of the changes it makes.
func (s *server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	return s.requireBearer(s.tokenSum, "http", s.tokenFingerprint)(next)
}

// requireBearer admits a request carrying "Authorization: Bearer <token>"
// where sum is the token's tokenSum (service.Token.Check); one refused is
// counted and logged as edge's (Service.AdminRefused). A request admitted
// is marked with fingerprint, unless it is empty.
func (s *server) requireBearer(sum [32]byte, edge, fingerprint string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if err := service.Token(sum).Check(req.Header.Get(echo.HeaderAuthorization)); err != nil {
				s.svc.AdminRefused(req.Context(), edge, req.RemoteAddr, err)
				return newError(http.StatusUnauthorized, codeUnauthorized, "%s", err.Error())
			}
			if fingerprint != "" {
				c.SetRequest(req.WithContext(service.WithAdmin(req.Context(), fingerprint)))
			}
			return next(c)
		}
	}
}
