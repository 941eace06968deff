// Package client is the Go client of leaf: it leases ranges of segment-mode
// ids from leaf servers and hands them out in-process, so that an id costs
// about one atomic add instead of an HTTP round trip. It also hands out
// snowflake ids, fetched in small batches.
//
// # Install
//
//	go get github.com/leafid/leaf/client
//
// The package imports the standard library only, none of the server's
// dependencies (database drivers, echo, Prometheus).
//
// # Example
//
//	c, err := client.New(client.Config{
//		Endpoints: []string{"http://leaf-1:8080", "http://leaf-2:8080"},
//	})
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	id, err := c.Next(ctx, "orders")
//
// A Client is safe for concurrent use; make one per process and share it.
//
// # Ranges
//
// For each tag the client keeps a double buffer of ranges taken from
// GET /api/segment/range/{tag}?count=N. Next takes an id from the current
// range with one atomic add; once a quarter of it is used, the next range
// is fetched in the background, so that the switch at its end costs a
// mutex, not a request. A call waits for the server only on a tag's first
// call, and when a range runs out before the next one has arrived.
//
// The size of a range follows the tag's traffic: each request asks for
// what the tag used in RefillInterval (1s by default) at its recent rate,
// so a tag asks about once per RefillInterval however busy it is, within
// MinRange and MaxRange, changing by at most a factor of 4 at a time; a
// call that had to wait doubles the next size at least. A server hands out
// fewer ids than asked where its own segment ends, never none.
//
// # Every core
//
// Next takes each id with one atomic add on a counter that every
// goroutine writes, so goroutines on several cores slow each other
// down. A Source, which one goroutine keeps, reserves blocks of the same
// range with one atomic add per block and hands their ids out with no
// shared write, so ids per second grow with cores:
//
//	src := c.Source("orders") // in each goroutine, kept as long as it runs
//	id, err := src.Next(ctx)
//
// Each Source's ids increase, as one goroutine's ids from Next do; across
// goroutines they are unique but not ordered. See Source.
//
// # Failover
//
// Requests go to Config.Endpoints in turn. An endpoint that fails (no
// answer within RequestTimeout, a network error, a 5xx other than
// tag_misconfigured, a 429, an answer that cannot be read) is left out for
// a back-off that starts at BackoffMin and doubles with each failure in a
// row up to BackoffMax, and the request goes on to the next endpoint, as
// long as the caller's context allows (a load in the background runs
// until Close). An answer that every server would give as well, a 4xx such
// as unknown_tag or invalid_tag and the 500 tag_misconfigured, is returned
// at once and does not count against the endpoint.
//
// While no endpoint answers, ids keep coming from the buffered ranges, and
// each tag's background load tries again whenever a back-off ends. Once a
// tag's ranges are used up, Next returns an error wrapping ErrUnavailable
// that lists the last error of every endpoint; while every endpoint is
// backing off, that error comes at once, without a request.
//
// # What a restart costs
//
// Ids buffered in a process are lost when it stops, whether it crashes or
// calls Close: per tag, the unused rest of the current range and the next
// range if it was fetched. With the default RefillInterval that is one to
// two seconds of the tag's traffic in that process, and never more than
// 2 × MaxRange ids per tag. Ids are 63-bit: a tag losing two million ids
// at each of a thousand restarts a day would run for over ten million
// years. Close does not hand ranges back: the server can only take back
// the tail of a tag's row, the ids above everything ever handed out, and a
// client's range is a slice of a server's segment with other clients'
// ranges above it.
//
// Ids of one tag are unique across every client and server sharing the
// database, and increase within a range; ranges from different servers
// interleave, so ids are not increasing across a process's ranges.
//
// # Snowflake ids
//
// Snowflake fetches SnowflakeBatch ids at a time from
// GET /api/snowflake/batch and fetches the next batch when half of the
// current one is used or half of SnowflakeMaxAge has passed. A snowflake
// id carries the millisecond it was made in, so the client never hands
// out one older than SnowflakeMaxAge (1s by default), counted from when
// the request that fetched it was sent; older ones are dropped.
//
// # Per-key sequences
//
// SequenceNext, SequenceNextN and SequenceCurrent make one request a
// call: a sequence number is never buffered. Each space's routing table
// (GET /api/sequence/routes/{space}), fetched in the background on the
// space's first call, names the owner of each section; the client
// computes a key's section and calls its owner directly, at the address
// the server advertises and over the scheme of the endpoint that told the
// table (https for an https:// endpoint), so that no server forwards the
// call. It falls
// back to Endpoints while the table names no owner for the section or the
// owner gives no usable answer. Each call sends the table's version in the
// header Leaf-Routes-Version, and a server that sees another answers it;
// the client fetches the table again, at most once per RoutesInterval,
// when an answer shows it stale (an owner that failed, or another
// version). The table only
// chooses where to ask: numbers come from the servers alone, so a stale
// table costs a forward or a retry, never a repeated or lower number.
// NoDirectSequences sends every call to Endpoints.
//
// # Errors
//
// Each error code of the server has a sentinel (ErrUnknownTag,
// ErrInvalidTag, ErrExhausted, ErrUnavailable, …) that errors.Is finds in
// the errors returned; errors.As finds an *Error with the endpoint, HTTP
// status, code and message. A call whose context ends returns an error
// wrapping the context's error, and calls after Close return ErrClosed.
package client
