# The same commits with the first and last as the ends, from a full (not shallow) clone:
# pip's fetch of a commit loops on a shallow clone's roots.
set -u
rm -rf /tmp/thunder.git && cp -r .gpuy/thunder-full.git /tmp/thunder.git
rm -rf /tmp/bisect/commits && mkdir -p /tmp/bisect/commits
( time timeout "${T2:-420}" python3 -m bot bisect --package thunder --good "$(sed -n 1p .gpuy/bisect/ends.txt)" \
    --bad "$(sed -n 2p .gpuy/bisect/ends.txt)" --builds .gpuy/bisect/between.txt \
    --points bfloat16/2048x8192,float32/16384x8192 --machine nvidia-h200 \
    --state /tmp/bisect/commits/state.json --budget-s "${B2:-300}" --json /tmp/bisect/commits/answer.json ) \
    > /tmp/bisect/commits/log.txt 2>&1; echo "exit $?" >> /tmp/bisect/commits/log.txt
tail -8 /tmp/bisect/commits/log.txt
