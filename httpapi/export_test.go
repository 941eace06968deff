package httpapi

// RewriteRefusal exposes rewriteRefusal to the fuzz target.
var RewriteRefusal = rewriteRefusal
