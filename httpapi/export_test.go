package httpapi

// RewriteRefusal exposes rewriteRefusal to the fuzz target.
var RewriteRefusal = rewriteRefusal

// MaxBodyBytes is the largest request body.
const MaxBodyBytes = maxBodyBytes

// OpenAPIDocument is the embedded openapi.json.
var OpenAPIDocument = openAPIDocument

// MaxForwardedBody is the largest answer of an owner a Peer reads.
const MaxForwardedBody = maxForwardedBody
