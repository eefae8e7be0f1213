/* The C example (examples/c/prove.c, compiled with -Dmain=cuzk_example_main) in one program
 * with a second Rust static library that carries its own blst and Rust runtime (lib.rs, the
 * stand-in for filecoin-ffi's libfilcrypto): both libraries work side by side. */
#include <stdio.h>

int colink_bls_selfcheck(void);
int cuzk_example_main(int argc, char **argv);

int main(int argc, char **argv) {
    if (colink_bls_selfcheck() != 1) {
        fprintf(stderr, "colink: the other library's blst signature check failed\n");
        return 1;
    }
    return cuzk_example_main(argc, argv);
}
