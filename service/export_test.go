package service

// MaxForwardedBody is the largest answer of an owner a forward takes.
const MaxForwardedBody = maxForwardedBody
