package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/base62"
)

type convertedID struct {
	Decimal string `json:"decimal"`
	Base62  string `json:"base62"`
}

// convert turns an id in one text form into both: /api/convert/decimal/{id}
// reads a decimal id, /api/convert/base62/{id} a base62 one. The form is
// in the path because a string of 11 digits is valid in both.
func (s *server) convert(c echo.Context) error {
	raw, err := pathParam(c, "id")
	if err != nil {
		return newError(http.StatusBadRequest, codeInvalidID, "the id is not validly percent-encoded")
	}
	var id int64
	switch form := c.Param("form"); form {
	case "decimal":
		if raw == "" || !allDigits(raw) {
			return newError(http.StatusBadRequest, codeInvalidID, "a decimal id is a non-negative base-10 64-bit integer")
		}
		if id, err = strconv.ParseInt(raw, 10, 64); err != nil {
			return newError(http.StatusBadRequest, codeInvalidID, "a decimal id is a non-negative base-10 64-bit integer")
		}
	case "base62":
		if id, err = base62.Decode(raw); err != nil {
			if errors.Is(err, base62.ErrInvalid) {
				return newError(http.StatusBadRequest, codeInvalidID, "%s", err.Error())
			}
			return err
		}
	default:
		return newError(http.StatusNotFound, codeNotFound, "no such form: want /api/convert/decimal/{id} or /api/convert/base62/{id}")
	}
	return c.JSON(http.StatusOK, convertedID{Decimal: strconv.FormatInt(id, 10), Base62: base62.Encode(id)})
}
