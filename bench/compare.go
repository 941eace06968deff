// Package bench compares leaf's snowflake generator with
// github.com/bwmarrin/snowflake and github.com/sony/sonyflake. It is a
// module of its own so that neither becomes a dependency of the service.
//
// Ceilings per generator (one worker / node / machine):
//   - leaf and bwmarrin: 4096 ids per 1 ms tick = 4.096 M ids/s;
//   - sonyflake: 256 ids per 10 ms tick = 25,600 ids/s.
//
// Run: go test -bench . -benchtime=2s -count=5 -run '^$'
package bench
