package httpapi

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
)

// textForm refuses a form other than decimal for a formatted tag's ids,
// which are texts.
func textForm(tag string) error {
	return newError(http.StatusBadRequest, codeInvalidRequest, "biz tag %q is formatted: its ids are texts, which have no decimal or base62 form", tag)
}

// writeText answers one formatted id: its text, as text/plain.
func writeText(c echo.Context, text string) error {
	res := c.Response()
	res.Header()[echo.HeaderContentType] = textPlain
	res.WriteHeader(http.StatusOK)
	_, err := res.Write([]byte(text))
	return err
}

// adminReveal turns an opaque id back into its number:
// GET /api/admin/tags/{tag}/reveal/{id}. service.TagAdmin.Reveal checks
// and answers it, as it does leaf.v1.AdminService/RevealId.
func (s *server) adminReveal(c echo.Context) error {
	tag, err := pathTag(c)
	if err != nil {
		return err
	}
	id, err := parseID(c)
	if err != nil {
		return err
	}
	r, err := s.svc.Tags().Reveal(c.Request().Context(), tag, id)
	if err != nil {
		return err
	}
	b := make([]byte, 0, 64+len(r.Tag))
	b = append(b, `{"tag":`...)
	b = appendJSONString(b, r.Tag)
	b = append(b, `,"id":"`...)
	b = strconv.AppendInt(b, r.ID, 10)
	b = append(b, `","number":"`...)
	b = strconv.AppendInt(b, r.Number, 10)
	b = append(b, `"}`...)
	return c.JSONBlob(http.StatusOK, b)
}
