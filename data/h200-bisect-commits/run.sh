# The lab H200 call: the real pair (Thunder nightlies 0.2.7.dev20251102 .. 0.2.7.dev20251123)
# bisected over its real upstream commits (bisect --plan), then the same commits with the
# first and last as the ends (git+file builds measured on the GPU).
set -u
mkdir -p /tmp/bisect/nightlies /tmp/bisect/commits
( time python3 -m bot bisect --plan .gpuy/bisect/plan.json --state /tmp/bisect/nightlies/state.json \
    --machine nvidia-h200 --budget-s "${B1:-230}" --json /tmp/bisect/nightlies/answer.json ) \
    > /tmp/bisect/nightlies/log.txt 2>&1; echo "exit $?" >> /tmp/bisect/nightlies/log.txt
( time python3 -m bot bisect --package thunder --good "$(sed -n 1p .gpuy/bisect/ends.txt)" \
    --bad "$(sed -n 2p .gpuy/bisect/ends.txt)" --builds .gpuy/bisect/between.txt \
    --points bfloat16/2048x8192,float32/16384x8192 --machine nvidia-h200 \
    --state /tmp/bisect/commits/state.json --budget-s "${B2:-230}" --json /tmp/bisect/commits/answer.json ) \
    > /tmp/bisect/commits/log.txt 2>&1; echo "exit $?" >> /tmp/bisect/commits/log.txt
tail -5 /tmp/bisect/nightlies/log.txt /tmp/bisect/commits/log.txt
