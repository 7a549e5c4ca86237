// One include, named by the test (-DPROBE="folder/file.hpp"), compiled with a layer's include root:
// tests/layers checks that a layer reaches its own headers and the layers' below, never above.
#include PROBE

int main() { return 0; }
