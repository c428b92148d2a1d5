//! Link-time setting for the binary: on GNU/Linux its relative relocations
//! (about 27,000, each one processed by the dynamic loader at every start)
//! are packed as DT_RELR (`-z pack-relative-relocs`, binutils 2.38+). The
//! linker emits them only where the C library can read them (glibc 2.36+
//! provides `GLIBC_ABI_DT_RELR`), and an older linker ignores the option
//! with a warning, so the binary builds and runs everywhere it did.
fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
