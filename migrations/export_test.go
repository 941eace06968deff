package migrations

// FS is dialectFS, for the tests of the embedded files.
var FS = dialectFS
