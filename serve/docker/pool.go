package docker

import (
	"sync"
	"time"
)

// pool keeps up to size containers started ahead, each with its interpreter already running
// and blocked reading its program from the attached stdin. A call takes one, uses it for that
// call only, and the container is destroyed afterwards; taking one hands a token back to the
// fillers, which start a replacement in the background. The tokens bound the containers the
// pool holds or is starting to size; the fillers (at most fillers at once) bound the engine
// load that refilling adds.
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

const maxFillers = 2

func (e *Executor) startPool(size int) {
	p := &pool{ready: make(chan *box, size), tokens: make(chan struct{}, size)}
	for range size {
		p.tokens <- struct{}{}
	}
	e.pool = p
	for range min(size, maxFillers) {
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

// take returns a pooled box, or nil when none is ready (the call then starts one cold).
func (p *pool) take() *box {
	select {
	case b := <-p.ready:
		p.tokens <- struct{}{}
		return b
	default:
		return nil
	}
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
