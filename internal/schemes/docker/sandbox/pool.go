package sandbox

import (
	"sync"
	"time"
)

// pool keeps up to size containers started ahead, each with its interpreter already running
// and blocked reading its program from the attached stdin. A call takes one, uses it for that
// call only, and the container is destroyed afterwards. When the call has its result, release
// hands a token back to the fillers, which start a replacement in the background: not at take,
// because a container's start costs the engine (dockerd, containerd, its shim, runc) several
// hundred ms of CPU, and a start beside the call slowed pooled calls on a 2-CPU host from
// ~8 to ~15-30 ms. The tokens bound the containers the pool holds, is starting, or has lent
// out to size; the fillers bound the engine load that refilling adds: one per two of the
// engine's CPUs (one on a 2-CPU host, where a second filler kept the pool fuller under 3 calls
// a second but slowed every pooled call from ~10 to ~17 ms p50).
//
// The end mark: the wrapper in each container writes "mcpsandbox-end:NONCE:STATUS:OOM" on both
// streams after the program; serve returns the call's result at the mark instead of waiting
// ~55 ms for the engine's exit path (attach EOF, wait). See wrapperPy for why a forged mark
// only cuts the forger's own call short.
type pool struct {
	ready  chan *box
	tokens chan struct{} // one per container missing from the pool
	wg     sync.WaitGroup
}

// fillers is how many containers the pool starts at once on an engine with ncpu CPUs.
func fillers(size, ncpu int) int {
	return max(1, min(size, ncpu/2, 8))
}

func (e *Executor) startPool(size, ncpu int) {
	p := &pool{ready: make(chan *box, size), tokens: make(chan struct{}, size)}
	for range size {
		p.tokens <- struct{}{}
	}
	e.pool = p
	for range fillers(size, ncpu) {
		p.wg.Add(1)
		go e.fill(p)
	}
}

func (e *Executor) fill(p *pool) {
	defer p.wg.Done()
	backoff := 100 * time.Millisecond
	for {
		select {
		case <-e.life.Done():
			return
		case <-p.tokens:
		}
		b, err := e.newBox(true)
		if err != nil {
			p.tokens <- struct{}{}
			if e.life.Err() != nil {
				return
			}
			e.log.Warn("starting a pooled container failed; calls start containers cold meanwhile", "err", err, "retry_in", backoff)
			select {
			case <-e.life.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 10*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		p.ready <- b // never blocks: tokens bound the boxes to cap(ready)
	}
}

// take returns a pooled box, or nil when none is ready (the call then starts one cold). The
// caller must release a box it got, once, when its call is over.
func (p *pool) take() *box {
	select {
	case b := <-p.ready:
		return b
	default:
		return nil
	}
}

// release lets the fillers replace a box that take returned.
func (p *pool) release() {
	p.tokens <- struct{}{} // never blocks: one token per box taken
}

// drain stops the fillers and returns the boxes still pooled.
func (p *pool) drain() []*box {
	p.wg.Wait()
	var bs []*box
	for {
		select {
		case b := <-p.ready:
			bs = append(bs, b)
		default:
			return bs
		}
	}
}
