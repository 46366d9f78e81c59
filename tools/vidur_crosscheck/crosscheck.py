#!/usr/bin/env python3
"""A second, independent reading of Vidur's Sarathi replica scheduler (the simulator's
default: chunk 512, batch cap 128, blocks of 16, 1 % watermark, whole-prompt reservation,
restart of the latest arrival when a decode finds no free block) over a Kairos profile's
Vidur tables (exec "vidur", derive-profile vidur), written from
docs/upstream/vidur_execution_model.md and Vidur's scheduler as read; no Vidur code.

It runs the Azure conversation trace's first N requests at their timestamps (stretched by
1 / rate-scale) and prints TTFT, TPOT and E2E (mean, p99) beside kairos-cli simulate's with
the matching options, and the relative difference. Without memory pressure the two agree
exactly; where requests are restarted they differ by the engines' preemption rules (see
the README beside this file).

    python3 tools/vidur_crosscheck/crosscheck.py --limit 1000 --rate-scale 0.25
"""
import argparse, csv, datetime, json, math, os, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def load_tables(prof):
    global V, L, ops, AR, DEC, PRE, CS, ntok, layer_tok
    V = prof['vidur']; L = V['layers']
    ops = V['token_ops_ms']; AR = V.get('all_reduce_ms'); DEC = V['decode_ms']; PRE = V['prefill_ms']; CS = V['chunk_step']
    ntok = len(next(iter(ops.values())))
    layer_tok = [sum(v[i] for v in ops.values()) + (2 * (AR[i] + V['nccl_launch_ms']) if AR else 0) for i in range(ntok)]

def batch_ms(chunks, decodes):
    # chunks: list of (c, processed_before); decodes: list of processed tokens
    tot = sum(c for c,_ in chunks) + len(decodes)
    R = (tot + 7)//8*8
    t = layer_tok[min(max(R//8-1,0), ntok-1)]
    if decodes:
        b = len(decodes); m = int(sum(decodes)/b); k = (m+63)//64
        row = DEC[min(b, len(DEC))-1]; t += row[min(k, len(row)-1)] * (1.1 if b>1 else 1)
    if chunks:
        kv = sum((p+63)//64*64 for _,p in chunks); c = round(math.sqrt(sum(x*x for x,_ in chunks)))
        row = PRE[min(kv//64, len(PRE)-1)]; x = c/CS-1
        if x <= 0: v = row[0]
        elif x >= len(row)-1: v = row[-1]
        else:
            j = int(x); c0=(j+1)*CS; c1=c0+CS; w=(c*c-c0*c0)/(c1*c1-c0*c0); v=row[j]+w*(row[j+1]-row[j])
        t += v*(1.1 if len(chunks)>1 else 1)
    return t*L*1e-3

class Req:
    def __init__(s, i, at, p, d):
        s.id=i; s.arrived_at=at; s.num_prefill_tokens=p; s.num_decode_tokens=d; s.processed=0
        s.prefill_complete=False; s.completed=False; s.prefill_completed_at=None; s.completed_at=None; s.restarts=0
    def total(s): return s.num_prefill_tokens + s.num_decode_tokens
    def on_batch_end(s, t, n):
        s.processed += n
        if s.processed == s.num_prefill_tokens:
            s.prefill_complete = True; s.processed += 1
            if s.prefill_completed_at is None: s.prefill_completed_at = t
        if s.processed == s.total():
            s.completed = True; s.completed_at = t
    def restart(s):
        total = s.total()
        s.num_prefill_tokens = s.processed; s.num_decode_tokens = total - s.processed
        s.processed = 0; s.prefill_complete = False; s.restarts += 1

def run(reqs, chunk=512, cap=128, block=16, num_blocks=None, wm_frac=0.01):
    wm = int(wm_frac*num_blocks)
    queue=[]; pre=[]; alloc={}; used=[0]
    def can_alloc(r):
        if r.id not in alloc: return num_blocks-used[0]-math.ceil(r.num_prefill_tokens/block) >= wm
        return num_blocks-used[0] >= 1
    def allocate(r):
        if r.id not in alloc:
            n=math.ceil(r.num_prefill_tokens/block); alloc[r.id]=n; used[0]+=n; return
        need=max(0, r.processed - alloc[r.id]*block)
        assert need in (0,1)
        if need: alloc[r.id]+=1; used[0]+=1
    def free(r): used[0]-=alloc.pop(r.id)
    def nxt(r, nb):
        if r.prefill_complete: return 1
        return max(0, min(r.num_prefill_tokens - r.processed, chunk - nb))
    def next_batch():
        nonlocal pre, queue
        reqs_=[]; nt=[]; skipped=[]; running_prefills=[]; nb=0
        while pre:
            if len(reqs_)==cap: break
            r=pre.pop(0)
            if not r.prefill_complete: running_prefills.append(r); continue
            n=nxt(r,nb)
            if n==0: skipped.append(r); continue
            ok=True
            while not can_alloc(r):
                if pre:
                    v=pre.pop(-1); v.restart(); free(v); queue=[v]+queue
                else:
                    r.restart(); free(r); queue=[r]+queue; ok=False; break
            if ok:
                allocate(r); nb+=n; reqs_.append(r); nt.append(n)
        for r in running_prefills:
            n=nxt(r,nb)
            if n==0: skipped.append(r); continue
            nb+=n; reqs_.append(r); nt.append(n)
        pre = sorted(skipped+pre, key=lambda q:q.arrived_at)
        while queue:
            if len(alloc)==cap: break
            if len(reqs_)==cap: break
            if not can_alloc(queue[0]): break
            n=nxt(queue[0],nb)
            if n==0: break
            r=queue.pop(0); allocate(r); nb+=n; reqs_.append(r); nt.append(n)
        return list(zip(reqs_,nt))
    t=0.0; i=0; n=len(reqs); busy_until=None; batch=None; done=0; iters=0
    while done < n:
        # next event: arrival or batch end
        if batch is None:
            # admit arrivals up to t
            while i<n and reqs[i].arrived_at <= t: queue.append(reqs[i]); i+=1
            batch = next_batch()
            if not batch:
                batch=None
                t = reqs[i].arrived_at; continue
            chunks=[(k, r.processed) for r,k in batch if not r.prefill_complete]
            decs=[r.processed for r,k in batch if r.prefill_complete]
            busy_until = t + batch_ms(chunks, decs); iters+=1
        # arrivals before batch end join the queue (at their time; they do not preempt)
        while i<n and reqs[i].arrived_at < busy_until: queue.append(reqs[i]); i+=1
        t = busy_until
        for r,k in batch:
            r.on_batch_end(t,k)
        for r,k in batch:
            if r.completed: free(r); done+=1
            else: pre.append(r)
        batch=None
    return iters

def load_azure(path, limit, scale=1.0):
    out=[]; t0=None
    for k,row in enumerate(csv.DictReader(open(path))):
        if k>=limit: break
        ts=row['TIMESTAMP']; d=datetime.datetime.strptime(ts[:26], '%Y-%m-%d %H:%M:%S.%f')
        s=d.timestamp()
        if t0 is None: t0=s
        out.append(Req(k,(s-t0)/scale,int(row['ContextTokens']),int(row['GeneratedTokens'])))
    return out

def stats(v):
    v = sorted(v)
    return sum(v) / len(v), v[min(len(v) - 1, int(math.ceil(0.99 * len(v))) - 1)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kairos", default=os.path.join(ROOT, "build/bin/kairos-cli"))
    ap.add_argument("--profile", default=os.path.join(ROOT, "resources/profiles/llama2-70b-tp2-vidur.json"))
    ap.add_argument("--trace", default=os.path.join(ROOT, "../shared/data/AzureLLMInferenceTrace_conv_2023.csv"))
    ap.add_argument("--limit", type=int, default=1000)
    ap.add_argument("--rate-scale", type=float, default=0.25)
    ap.add_argument("--engine-rules", default="kairos", choices=["kairos", "vllm-v0"],
                    help="the rules Kairos's engine follows (simulate --engine-rules)")
    a = ap.parse_args()
    prof = json.load(open(a.profile))
    load_tables(prof)
    reqs = load_azure(a.trace, a.limit, a.rate_scale)
    run(reqs, num_blocks=prof['kv_capacity_tokens'] // 16)
    ref = {
        "ttft": stats([r.prefill_completed_at - r.arrived_at for r in reqs]),
        # Kairos's TPOT is vLLM's (excluding the first token); Vidur's divides by all of them.
        "tpot": stats([(r.completed_at - r.prefill_completed_at) / (r.num_decode_tokens - 1)
                       for r in reqs if r.num_decode_tokens > 1]),
        "e2el": stats([r.completed_at - r.arrived_at for r in reqs]),
    }
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "k.json")
        subprocess.run([a.kairos, "simulate", "-w", a.trace, "--profile", a.profile, "--chunked-prefill",
                        "--max-num-batched-tokens", "512", "--max-num-seqs", "128", "--block-size", "16",
                        "--engine-rules", a.engine_rules, "--limit", str(a.limit), "--rate-scale", str(a.rate_scale), "--json", out, "-q"],
                       check=True)
        k = json.load(open(out))
    print("%-6s %12s %12s %8s %12s %12s %8s" % ("", "ref mean", "kairos", "diff", "ref p99", "kairos", "diff"))
    for m in ("ttft", "tpot", "e2el"):
        km, kp = k["mean_%s_ms" % m] / 1e3, k["p99_%s_ms" % m] / 1e3
        rm, rp = ref[m]
        print("%-6s %12.4f %12.4f %+7.2f%% %12.4f %12.4f %+7.2f%%" % (m, rm, km, 100 * (km / rm - 1), rp, kp, 100 * (kp / rp - 1)))
    print("restarts (reference) %d, preemptions (kairos) %d" % (sum(r.restarts for r in reqs), k["preemptions"]))


if __name__ == "__main__":
    main()
