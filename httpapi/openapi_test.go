package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/httpapi"
)

// The OpenAPI document, httpapi/openapi.json, is held to the server three
// ways: it is a valid OpenAPI 3.1 document whose error codes are those of
// codes.go (TestOpenAPIDocument); it has every route echo has, and no
// operation echo does not have (TestOpenAPIRoutes); and real answers of
// every operation, errors included, match it (TestOpenAPIAnswers).

const docFile = "httpapi/openapi.json"

// apiDoc is the reference of the HTTP API, which the tests hold to the
// server: its routes, its errors and its limits.
const apiDoc = "../docs/http-api.md"

func readAPIDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(apiDoc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// loadOpenAPI loads and validates the document.
func loadOpenAPI(tb testing.TB) *openapi3.T {
	tb.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPIDocument)
	if err != nil {
		tb.Fatalf("%s does not load: %v", docFile, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		tb.Fatalf("%s is not a valid OpenAPI document: %v", docFile, err)
	}
	return doc
}

// loadPlainOpenAPI loads the routes of the document's x-plain-text as a
// document of their own: the same one with those as its paths, so that
// their references resolve and kin-openapi validates them as any path.
func loadPlainOpenAPI(tb testing.TB) *openapi3.T {
	tb.Helper()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(httpapi.OpenAPIDocument, &raw); err != nil {
		tb.Fatalf("%s: %v", docFile, err)
	}
	var plain struct {
		Paths json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw["x-plain-text"], &plain); err != nil || len(plain.Paths) == 0 {
		tb.Fatalf("%s has no x-plain-text with paths: %v", docFile, err)
	}
	raw["paths"] = plain.Paths
	delete(raw, "x-plain-text")
	b, err := json.Marshal(raw)
	if err != nil {
		tb.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		tb.Fatalf("%s: x-plain-text does not load: %v", docFile, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		tb.Fatalf("%s: x-plain-text is not valid: %v", docFile, err)
	}
	return doc
}

// TestOpenAPIDocument: the document is valid OpenAPI 3.1; its ErrorCode
// schema lists every code of codes.go and no other, with the statuses
// each comes with; the error response of each status allows exactly the
// codes that say they come with it.
func TestOpenAPIDocument(t *testing.T) {
	doc := loadOpenAPI(t)
	if !doc.IsOpenAPI31OrLater() || !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Errorf("%s is OpenAPI %q, want 3.1.x", docFile, doc.OpenAPI)
	}

	codes := httpapi.ErrorCodes()
	slices.Sort(codes)
	ref := doc.Components.Schemas["ErrorCode"]
	if ref == nil {
		t.Fatalf("%s has no schema ErrorCode", docFile)
	}
	var enum []string
	for _, v := range ref.Value.Enum {
		enum = append(enum, v.(string))
	}
	slices.Sort(enum)
	if !slices.Equal(enum, codes) {
		t.Errorf("%s: schema ErrorCode lists %q; codes.go has %q", docFile, enum, codes)
	}
	statuses, ok := ref.Value.Extensions["x-statuses"].(map[string]any)
	if !ok {
		t.Fatalf("%s: schema ErrorCode has no x-statuses", docFile)
	}
	if got := slices.Sorted(maps.Keys(statuses)); !slices.Equal(got, codes) {
		t.Errorf("%s: x-statuses of ErrorCode has %q; codes.go has %q", docFile, got, codes)
	}
	// byStatus: the codes x-statuses says may come with each status.
	byStatus := map[int][]string{}
	for code, v := range statuses {
		list, _ := v.([]any)
		if len(list) == 0 {
			t.Errorf("%s: x-statuses gives %s no status", docFile, code)
		}
		for _, s := range list {
			n, _ := s.(float64)
			byStatus[int(n)] = append(byStatus[int(n)], code)
		}
	}
	// Each error response component allows the codes of its status.
	for name, status := range map[string]int{
		"BadRequest": 400, "Unauthorized": 401, "NotFound": 404, "MethodNotAllowed": 405,
		"RequestTimeout": 408, "Conflict": 409, "Gone": 410, "PayloadTooLarge": 413,
		"InternalError": 500, "Unavailable": 503,
	} {
		resp := doc.Components.Responses[name]
		if resp == nil {
			t.Errorf("%s has no response %s", docFile, name)
			continue
		}
		schema := resp.Value.Content.Get("application/json").Schema.Value
		var allowed []string
		for _, code := range codes {
			body := map[string]any{"error": map[string]any{"code": code, "message": "m"}}
			if schema.VisitJSON(body, openapi3.EnableJSONSchema2020()) == nil {
				allowed = append(allowed, code)
			}
		}
		want := slices.Sorted(slices.Values(byStatus[status]))
		if !slices.Equal(allowed, want) {
			t.Errorf("%s: response %s (%d) allows the codes %q; x-statuses gives %d to %q", docFile, name, status, allowed, status, want)
		}
	}
}

// grpcPrefixes are the paths of the gRPC, gRPC-Web and Connect handlers
// served beside the HTTP API. They are described by their .proto files,
// not by the OpenAPI document, so the walk leaves them out.
var grpcPrefixes = []string{"/leaf.v1.", "/grpc.health.v1.", "/grpc.reflection."}

// docParam turns echo's ":name" into OpenAPI's "{name}".
func docParam(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

// routesOf lists echo's routes as "METHOD /path/{param}". A route
// registered a second time without its last parameter (routes.go: an
// empty tag or id is a 400, not a 404) is the same operation in the
// document, so "/api/segment/get/" counts as "/api/segment/get/{tag}"
// when that is registered for the same method.
func routesOf(e *echo.Echo) map[string]bool {
	registered := map[string]bool{}
	for _, r := range e.Routes() {
		registered[r.Method+" "+r.Path] = true
	}
	out := map[string]bool{}
	for _, r := range e.Routes() {
		if slices.ContainsFunc(grpcPrefixes, func(p string) bool { return strings.HasPrefix(r.Path, p) }) {
			continue
		}
		path := r.Path
		if strings.HasSuffix(path, "/") && path != "/" {
			for key := range registered {
				method, full, _ := strings.Cut(key, " ")
				if method == r.Method && strings.HasPrefix(full, path+":") && !strings.Contains(full[len(path):], "/") {
					path = full
					break
				}
			}
		}
		out[r.Method+" "+docParam(path)] = true
	}
	return out
}

// operationsOf lists the documents' operations as "METHOD /path/{param}".
func operationsOf(docs ...*openapi3.T) map[string]bool {
	out := map[string]bool{}
	for _, doc := range docs {
		for path, item := range doc.Paths.Map() {
			for method := range item.Operations() {
				out[method+" "+path] = true
			}
		}
	}
	return out
}

// TestOpenAPIRoutes walks echo's router and the document both ways: every
// route of the server (admin API mounted) is an operation of the
// document, and every operation of the document is a route. The gRPC
// paths (grpcPrefixes) are left out. An operation is in the document's
// paths or, for the plain-text id routes, in its x-plain-text.
func TestOpenAPIRoutes(t *testing.T) {
	doc := loadOpenAPI(t)
	v := newEnv(t, withUUIDs, func(c *envConfig) { c.StatusToken = "status-token" })
	routes, ops := routesOf(v.e.Echo), operationsOf(doc, loadPlainOpenAPI(t))
	if len(routes) < 25 {
		t.Fatalf("echo has %d routes: the walk found too few: %v", len(routes), routes)
	}
	for _, r := range slices.Sorted(maps.Keys(routes)) {
		if !ops[r] {
			t.Errorf("route %s is not in %s: describe it there (docs/openapi.md)", r, docFile)
		}
	}
	for _, op := range slices.Sorted(maps.Keys(ops)) {
		if !routes[op] {
			t.Errorf("%s has %s, which the server does not answer", docFile, op)
		}
	}
}

// TestOpenAPIServed: GET /openapi.json answers the document as it is in
// the repository.
func TestOpenAPIServed(t *testing.T) {
	v := newEnv(t)
	rec := v.do(t, http.MethodGet, "/openapi.json", nil)
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("GET /openapi.json: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	if !bytes.Equal(rec.Body.Bytes(), httpapi.OpenAPIDocument) {
		t.Fatalf("GET /openapi.json is not %s", docFile)
	}
}

// TestOpenAPIOperationsInHTTPAPIDoc: every operation of the document has
// its row in the tables of docs/http-api.md ("`GET /api/segment/get/{tag}`"),
// and every path that answers HEAD is named where that page says which do.
func TestOpenAPIOperationsInHTTPAPIDoc(t *testing.T) {
	doc := readAPIDoc(t)
	i := strings.Index(doc, "answer HEAD as")
	if i < 0 {
		t.Fatalf("%s does not say which paths answer HEAD", apiDoc)
	}
	head := doc[strings.LastIndex(doc[:i], "\n\n"):i]
	for _, op := range slices.Sorted(maps.Keys(operationsOf(loadOpenAPI(t), loadPlainOpenAPI(t)))) {
		method, path, _ := strings.Cut(op, " ")
		if method == http.MethodHead {
			if !strings.Contains(head, "`"+path+"`") {
				t.Errorf("%s does not name %s among the paths that answer HEAD", apiDoc, path)
			}
			continue
		}
		want := "`" + method + " " + path
		found := false
		for rest := doc; !found; {
			j := strings.Index(rest, want)
			if j < 0 {
				break
			}
			rest = rest[j+len(want):]
			found = rest != "" && strings.ContainsRune("`?", rune(rest[0]))
		}
		if !found {
			t.Errorf("%s has no row for %s %s", apiDoc, method, path)
		}
	}
}
