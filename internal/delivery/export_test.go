package delivery

// ResponseHeaders is responseHeaders, for the tests.
var ResponseHeaders = responseHeaders
