// Generates the gRPC client from proto/ at build time, with a vendored protoc (no system
// protoc needed). The generated code lands in OUT_DIR; see `pb` in src/main.rs.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    tonic_prost_build::configure().build_server(false).compile_with_config(
        config,
        &["../../proto/cancellation_hearts/v1/referee_service.proto"],
        &["../../proto"],
    )?;
    Ok(())
}
