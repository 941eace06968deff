// Package generators holds leaf's OpenAPI document to the client
// generators users run on it: ogen and oapi-codegen for Go (module
// generators/go, which pins them as tools) and openapi-typescript with
// openapi-fetch for TypeScript (generators/typescript, pinned in its
// package.json). Its test generates each client with the generator's
// default options, builds it, and runs a program that calls every
// operation of the document against two real leaf instances and holds
// each decoded answer to the raw one; it also runs, as written, the
// examples of docs/openapi.md that generate a client and take an id.
//
// It has no code; its test runs when LEAF_TEST_GENERATORS=1 (make
// generated-clients, docs/openapi.md), with Go, Node.js and npm, and the
// Go module proxy and the npm registry reachable. The generated code is
// written under generators/go and generators/typescript and ignored by
// git.
package generators
