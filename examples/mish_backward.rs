//! The vendor's aclnnMishBackward sample, in idiomatic Rust.
//!
//! grad_output = [0, 1, ..., 7], self = [1, 1, 1, 2, 2, 2, 3, 3], shape [4, 2], f32.
//! Runs on CANN when its libraries are found, else on the in-process simulator, and
//! compares the result with the crate's CPU reference.
//!
//! ```sh
//! cargo run --example mish_backward
//! ```

use ascendcl::{DeviceTensor, Runtime, mish_backward};
use ndarray::{Array2, ArrayD};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::auto()?;
    let device = rt.device(0)?;
    println!(
        "backend: {} — device 0 is {} ({} device(s))",
        rt.backend(),
        device.soc_name(),
        rt.device_count()?
    );
    let stream = device.stream()?;

    let shape = (4, 2);
    let grad = Array2::from_shape_vec(shape, (0..8).map(|v| v as f32).collect())
        .map_err(|e| ascendcl::Error::InvalidArgument(e.to_string()))?;
    let x = Array2::from_shape_vec(shape, vec![1.0f32, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0])
        .map_err(|e| ascendcl::Error::InvalidArgument(e.to_string()))?;

    let grad_dev = DeviceTensor::from_array(&stream, &grad)?;
    let x_dev = DeviceTensor::from_array(&stream, &x)?;
    let mut out_dev = DeviceTensor::<f32>::zeros(&stream, [4, 2])?;

    mish_backward(&grad_dev, &x_dev, &mut out_dev, &stream)?;
    let out: Array2<f32> = out_dev.to_array(&stream)?;

    let reference: ArrayD<f32> =
        ascendcl::reference::mish_backward(grad.view().into_dyn(), x.view().into_dyn())?;

    println!("  i   grad    self   grad_input    reference    difference");
    for (i, ((g, s), (o, r))) in grad
        .iter()
        .zip(x.iter())
        .zip(out.iter().zip(reference.iter()))
        .enumerate()
    {
        println!("{i:3} {g:6.1} {s:7.1} {o:12.6} {r:12.6} {:13.3e}", o - r);
    }
    Ok(())
}
