package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

func tokenSum(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// requireToken admits a request carrying the admin token.
func (s *server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	return requireBearer(s.tokenSum)(next)
}

// requireBearer admits a request carrying "Authorization: Bearer <token>"
// where sum is the token's tokenSum. Both sides are hashed first so the
// comparison takes the same time whatever the length or content of the
// guess.
func requireBearer(sum [32]byte) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Request().Header.Get(echo.HeaderAuthorization)
			scheme, token, ok := strings.Cut(h, " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") {
				return newError(http.StatusUnauthorized, codeUnauthorized, "missing bearer token")
			}
			got := tokenSum(strings.TrimSpace(token))
			if subtle.ConstantTimeCompare(got[:], sum[:]) != 1 {
				return newError(http.StatusUnauthorized, codeUnauthorized, "wrong bearer token")
			}
			return next(c)
		}
	}
}
