package memfs

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// perCore calls a worker's function for every index in [0, n), a worker
// per core, each taking the next index not yet taken. worker is called
// once per worker goroutine, so that each can keep scratch of its own (a
// read buffer, a record buffer) across the indexes it takes. After the
// first error no index is handed out any more, and that error is returned.
func perCore(n int, worker func() func(i int) error) error {
	return inWorkers(runtime.GOMAXPROCS(0), n, worker)
}

// inWorkers is perCore with the number of workers given. A worker checks
// the failed flag before it works the index it took, so once the flag is
// set no index is worked; a worker already inside its work finishes it.
func inWorkers(workers, n int, worker func() func(i int) error) error {
	var next atomic.Int64
	var failed atomic.Bool
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			work := worker()
			for i := int(next.Add(1)) - 1; i < n && !failed.Load(); i = int(next.Add(1)) - 1 {
				if err := work(i); err != nil {
					errOnce.Do(func() { firstErr = err })
					failed.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}
