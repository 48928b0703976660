# Rebuild the slimmed nvFuser wheel from its xz tarball (NOTES section 7), take Thunder
# 0.2.7.dev20251102 as the base Thunder, then set the stack up.
ln -sfn .gpux .gpu
rm -rf /tmp/nvf && mkdir -p /tmp/nvf && tar xJf .gpux/nvfuser.tar.xz -C /tmp/nvf || return 1
python3 - <<'PY' || return 1
import os, zipfile
name = ".gpux/wheels/nvfuser_cu130_torch210-0.2.36.dev20260301-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"
with zipfile.ZipFile(name, "w", zipfile.ZIP_STORED) as z:
    for root, _, files in os.walk("/tmp/nvf"):
        for f in files:
            full = os.path.join(root, f)
            z.write(full, os.path.relpath(full, "/tmp/nvf"))
PY
