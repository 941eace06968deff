// Command clientload takes ids from a running leaf through the Go client
// for a while, from several goroutines, and prints ids per second: the
// end-to-end figure of scripts/loadtest.sh beside wrk's single-id
// requests. With -source each goroutine has a client.Source of its own.
// Each goroutine checks that its ids increase. It is not part of the
// service.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leafid/leaf/client"
)

func main() {
	endpoint := flag.String("endpoint", "http://127.0.0.1:18080", "leaf base URL")
	tag := flag.String("tag", "bench", "biz tag")
	workers := flag.Int("goroutines", 8, "goroutines taking ids")
	source := flag.Bool("source", false, "each goroutine takes ids from a client.Source of its own, not from Client.Next")
	d := flag.Duration("d", 10*time.Second, "how long to run")
	flag.Parse()

	c, err := client.New(client.Config{Endpoints: []string{*endpoint}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *d)
	defer cancel()
	var (
		n    atomic.Int64
		wg   sync.WaitGroup
		fail atomic.Value
	)
	start := time.Now()
	for range *workers {
		wg.Go(func() {
			var src *client.Source
			if *source {
				src = c.Source(*tag)
			}
			var local, last int64
			// The deadline is looked at every 256 ids, so that the loop
			// costs little beside an id.
			for ctx.Err() == nil {
				for range 256 {
					var id int64
					var err error
					if src != nil {
						id, err = src.Next(ctx)
					} else {
						id, err = c.Next(ctx, *tag)
					}
					if err != nil {
						if ctx.Err() == nil {
							fail.Store(err)
						}
						n.Add(local)
						return
					}
					if id <= last {
						fail.Store(fmt.Errorf("id %d after %d", id, last))
						n.Add(local)
						return
					}
					last = id
					local++
				}
			}
			n.Add(local)
		})
	}
	wg.Wait()
	took := time.Since(start)
	if err, _ := fail.Load().(error); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.0f\n", float64(n.Load())/took.Seconds())
}
