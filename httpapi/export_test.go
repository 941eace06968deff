package httpapi

// RewriteRefusal exposes rewriteRefusal to the fuzz target.
var RewriteRefusal = rewriteRefusal

// MaxBodyBytes is the largest request body.
const MaxBodyBytes = maxBodyBytes
