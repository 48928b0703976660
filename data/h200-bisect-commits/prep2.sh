ln -sfn .gpux .gpu
# Thunder's clone (uncompressed pack) and the two nightlies (unzipped) travel in one xz.
rm -rf /tmp/pack && mkdir -p /tmp/pack .gpux/extra && tar xJf .gpuy/thunder-extra.tar.xz -C /tmp/pack || return 1
rm -rf /tmp/thunder.git && cp -r /tmp/pack/thunder.git /tmp/thunder.git
python3 - <<'PY' || return 1
import os, zipfile
for name in os.listdir("/tmp/pack/extra"):
    src = os.path.join("/tmp/pack/extra", name)
    with zipfile.ZipFile(os.path.join(".gpux/extra", name), "w", zipfile.ZIP_DEFLATED) as z:
        for root, _, files in os.walk(src):
            for f in files:
                full = os.path.join(root, f)
                z.write(full, os.path.relpath(full, src))
PY
cp .gpux/extra/lightning_thunder-0.2.7.dev20251102-py3-none-any.whl .gpux/wheels/
source .gpux/setup.sh
