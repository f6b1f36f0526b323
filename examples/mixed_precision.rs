//! Mixed precision: bf16 activations with f32 gradients, a broadcast and a transposed
//! view, checked against the CPU reference with the CANN precision standard.
//!
//! bf16 needs an Atlas A2/A3 SoC ("Ascend910B*", "Ascend910_93*"); on other SoCs the
//! crate rejects it with a typed error before calling the library, and this example says
//! so.
//!
//! ```sh
//! cargo run --example mixed_precision
//! ```

use ascendcl::{DeviceTensor, Error, Runtime, mish_backward};
use half::bf16;
use ndarray::{Array, Array2, ArrayD};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::auto()?;
    let device = rt.device(0)?;
    println!("backend: {}, SoC {}", rt.backend(), device.soc_name());
    let stream = device.stream()?;

    // Activations x: [3, 5] in bf16, used transposed as a [5, 3] view.
    let x = Array2::from_shape_fn((3, 5), |(i, j)| {
        bf16::from_f32(i as f32 * 0.7 - j as f32 * 0.45 + 0.3)
    });
    // Gradients: one row of 3 values in f32, broadcast over the 5 rows.
    let grad = Array::from_vec(vec![0.5f32, -1.25, 2.0]);

    let x_dev = DeviceTensor::from_array(&stream, &x)?;
    let grad_dev = DeviceTensor::from_array(&stream, &grad)?;
    let mut out_dev = DeviceTensor::<f32>::zeros(&stream, [5, 3])?;

    let x_t = x_dev.view().t(); // [5, 3], strides [1, 5]
    let grad_b = grad_dev.view().broadcast_to([5, 3])?; // strides [0, 1]
    match mish_backward(grad_b, x_t, &mut out_dev, &stream) {
        Err(e @ Error::UnsupportedDtype { .. }) => {
            println!("this SoC has no bf16 MishBackward: {e}");
            return Ok(());
        }
        other => other?,
    }
    let out: Array2<f32> = out_dev.to_array(&stream)?;

    // promote(f32, bf16) = f32: the reference computes in f32.
    let reference: ArrayD<f32> =
        ascendcl::reference::mish_backward(grad.view().into_dyn(), x.t().into_dyn())?;

    let (mut sum, mut max) = (0.0f64, 0.0f64);
    for (o, r) in out.iter().zip(reference.iter()) {
        let rel = (f64::from(*o) - f64::from(*r)).abs() / (f64::from(*r).abs() + 1e-7);
        sum += rel;
        max = max.max(rel);
    }
    let mere = sum / out.len() as f64;
    let threshold = 2f64.powi(-13);
    println!("grad_input [5, 3] (f32):\n{out:.6}");
    println!(
        "MERE {mere:.3e} (< {threshold:.3e}), MARE {max:.3e} (< {:.3e}): {}",
        10.0 * threshold,
        if mere < threshold && max < 10.0 * threshold {
            "pass"
        } else {
            "FAIL"
        }
    );
    Ok(())
}
