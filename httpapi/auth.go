package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/service"
)

func tokenSum(token string) [32]byte { return service.NewToken(token) }

// requireToken admits a request carrying the admin token.
func (s *server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	return requireBearer(s.tokenSum)(next)
}

// requireBearer admits a request carrying "Authorization: Bearer <token>"
// where sum is the token's tokenSum (service.Token.Check).
func requireBearer(sum [32]byte) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := service.Token(sum).Check(c.Request().Header.Get(echo.HeaderAuthorization)); err != nil {
				return newError(http.StatusUnauthorized, codeUnauthorized, "%s", err.Error())
			}
			return next(c)
		}
	}
}
