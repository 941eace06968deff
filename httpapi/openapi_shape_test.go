package httpapi_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/leafid/leaf/httpapi"
)

// TestOpenAPIForGenerators holds the document to the shape client
// generators take whole (docs/openapi.md, "Generating a client"): one
// type per schema, unions only of a schema and null, a type beside every
// enum, a format on every number, allOf that only adds members, component
// names that cannot collide once a generator turns them into type names,
// HEAD answers without a body, and no id answered as plain text in paths.
// make generated-clients generates the clients and runs them.
func TestOpenAPIForGenerators(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(httpapi.OpenAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	var problems []string
	shapeWalk("#", doc, func(at string, s map[string]any) {
		problems = append(problems, schemaProblems(doc, at, s)...)
	})
	problems = append(problems, nameCollisions(doc)...)
	paths, _ := doc["paths"].(map[string]any)
	for path, item := range paths {
		for method, op := range item.(map[string]any) {
			for status, resp := range op.(map[string]any)["responses"].(map[string]any) {
				content := responseContent(doc, resp.(map[string]any))
				switch {
				case method == "head" && content != nil:
					problems = append(problems, fmt.Sprintf("HEAD %s %s declares a body, which a HEAD answer never has", path, status))
				case strings.HasPrefix(status, "2") && content["text/plain"] != nil && path != "/metrics":
					problems = append(problems, fmt.Sprintf("GET %s %s answers text/plain in paths: a client that reads every answer as JSON rounds a decimal id; describe it under x-plain-text with a JSON form in paths", path, status))
				}
			}
		}
	}
	slices.Sort(problems)
	for _, p := range problems {
		t.Errorf("%s: %s", docFile, p)
	}
}

// shapeWalk calls f on every schema of the document: anything under a
// "schema", "schemas", "properties", "items", "allOf", "anyOf" or "oneOf".
func shapeWalk(at string, v any, f func(at string, s map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			here := at + "/" + k
			switch k {
			case "schema", "items", "additionalProperties", "unevaluatedProperties":
				if s, ok := x.(map[string]any); ok {
					f(here, s)
				}
			case "schemas", "properties":
				if m, ok := x.(map[string]any); ok {
					for name, s := range m {
						if s, ok := s.(map[string]any); ok {
							f(here+"/"+name, s)
						}
					}
				}
			case "allOf", "anyOf", "oneOf":
				for i, s := range asList(x) {
					if s, ok := s.(map[string]any); ok {
						f(fmt.Sprintf("%s/%d", here, i), s)
					}
				}
			}
			shapeWalk(here, x, f)
		}
	case []any:
		for i, x := range v {
			shapeWalk(fmt.Sprintf("%s/%d", at, i), x, f)
		}
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// schemaProblems is what a generator would refuse or turn into an
// untyped value in one schema.
func schemaProblems(doc map[string]any, at string, s map[string]any) []string {
	var out []string
	typ, hasType := s["type"]
	if types, ok := typ.([]any); ok && !(len(types) == 2 && slices.Contains(types, any("null"))) {
		out = append(out, fmt.Sprintf("%s: type %v: one type, or one type and null", at, types))
	}
	if _, ok := s["const"]; ok {
		out = append(out, at+": const: an enum of one value, beside its type")
	}
	if _, ok := s["enum"]; ok && !hasType {
		out = append(out, at+": an enum without a type")
	}
	if (typ == "number" || typ == "integer") && s["format"] == nil {
		out = append(out, fmt.Sprintf("%s: a %s without a format", at, typ))
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if l := asList(s[k]); l != nil && !nullable(l) {
			out = append(out, fmt.Sprintf("%s: %s of %d schemas: only a schema and null", at, k, len(l)))
		}
	}
	seen := map[string]bool{}
	for _, m := range asList(s["allOf"]) {
		member, _ := m.(map[string]any)
		if ref, ok := member["$ref"].(string); ok {
			member, _ = doc["components"].(map[string]any)["schemas"].(map[string]any)[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		}
		props, _ := member["properties"].(map[string]any)
		for name := range props {
			if seen[name] {
				out = append(out, fmt.Sprintf("%s: allOf declares %s twice: a generator merges the two and may drop a member", at, name))
			}
			seen[name] = true
		}
	}
	return out
}

func nullable(l []any) bool {
	if len(l) != 2 {
		return false
	}
	for _, s := range l {
		if m, ok := s.(map[string]any); ok && m["type"] == "null" && len(m) == 1 {
			return true
		}
	}
	return false
}

// nameCollisions lists components whose names become the same Go or
// TypeScript type name (schema Space and parameter space were one).
func nameCollisions(doc map[string]any) []string {
	components, _ := doc["components"].(map[string]any)
	owner := map[string]string{}
	var out []string
	for _, kind := range []string{"schemas", "parameters", "responses", "headers", "requestBodies"} {
		m, _ := components[kind].(map[string]any)
		for name := range m {
			key := strings.ToLower(strings.Map(func(r rune) rune {
				if unicode.IsLetter(r) || unicode.IsDigit(r) {
					return r
				}
				return -1
			}, name))
			if prev, ok := owner[key]; ok {
				out = append(out, fmt.Sprintf("components %s and %s/%s make one type name", prev, kind, name))
			}
			owner[key] = kind + "/" + name
		}
	}
	return out
}

// responseContent is a response's content, through its $ref.
func responseContent(doc map[string]any, resp map[string]any) map[string]any {
	if ref, ok := resp["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/components/responses/")
		resp, _ = doc["components"].(map[string]any)["responses"].(map[string]any)[name].(map[string]any)
	}
	c, _ := resp["content"].(map[string]any)
	return c
}
