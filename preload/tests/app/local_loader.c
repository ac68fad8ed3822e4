/* Loads a HIP program built as a shared library (graph_counter.c with its
 * `main` renamed `app_main`) with dlopen(RTLD_LOCAL), the way Python loads
 * an extension module: HIP is then a dependency outside the global scope,
 * where dlsym(RTLD_NEXT) from a preloaded library does not look.
 * Usage: local_loader LIBRARY [ARGS...]; runs app_main(LIBRARY, ARGS...). */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s LIBRARY [ARGS...]\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
        return 1;
    }
    int (*app_main)(int, char **) = (int (*)(int, char **))dlsym(lib, "app_main");
    if (!app_main) {
        fprintf(stderr, "dlsym app_main: %s\n", dlerror());
        return 1;
    }
    return app_main(argc - 1, argv + 1);
}
