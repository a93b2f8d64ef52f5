# Sourced on a GPU machine (bash): makes a build packed by scripts/gpu-pack runnable there.
#   source scripts/gpu_pack_env.sh PACK      then $build is PACK/build
# Its libraries first, then the CUDA libraries this machine's toolkit holds; the tests and
# binaries find the sources and the build by the absolute paths they were built at, so those
# paths are made to lead here, so trepro reads the working tree's data/ (Multi30K ships there);
# a data folder the pack carries (TREPRO_DATA_DIR when it was packed) becomes TREPRO_DATA_DIR.
gpu_pack=$(cd "$1" && pwd)
build=$gpu_pack/build
gpu_cublas=$(find / -xdev -name 'libcublasLt.so.*' -print -quit 2>/dev/null || true)
# Where none is found, nothing is added (dirname of nothing would put "." on the path).
gpu_cuda_libs=${gpu_cublas:+$(dirname "$gpu_cublas")}
export LD_LIBRARY_PATH="$gpu_pack/lib${gpu_cuda_libs:+:$gpu_cuda_libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
gpu_built_at=$(cat "$gpu_pack/source_dir")
if [[ $gpu_built_at != "$PWD" && ! -e $gpu_built_at ]]; then
  mkdir -p "$(dirname "$gpu_built_at")" && ln -s "$PWD" "$gpu_built_at"
fi
gpu_built_build=$(cat "$gpu_pack/build_dir")
if [[ ! -e $gpu_built_build ]]; then
  mkdir -p "$(dirname "$gpu_built_build")" && ln -s "$build" "$gpu_built_build"
fi
if [[ -d $gpu_pack/data ]]; then export TREPRO_DATA_DIR=$gpu_pack/data; fi
