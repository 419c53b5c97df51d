# photos.bash — sourced by the esrgan tests after mpi_env.bash: real photos from
# python3-skimage's sample images (skips the test when they are not installed), a
# temporary directory $T removed on exit, and four training photos in $T/photos.
SK=/usr/lib/python3/dist-packages/skimage/data
[ -f "$SK/astronaut.png" ] || { echo "SKIP: python3-skimage's sample images are not installed"; exit 0; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/photos"
cp "$SK/astronaut.png" "$SK/chelsea.png" "$SK/coffee.png" "$SK/motorcycle_left.png" "$T/photos/"
