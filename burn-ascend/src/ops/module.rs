//! `ModuleOps`: 2-D convolution (forward and the three gradients) and 2-D max pooling
//! (with indices, and its gradient) on the device; the other convolutions, pooling,
//! interpolation, attention and FFTs on the host (counted).

use super::base::{cast, on};
use crate::Ascend;
use crate::fallback::{Host, host, nd, up, up_as};
use crate::tensor::{AscendTensor, ok};
use ascendcl as acl;
use burn_backend::TensorMetadata;
use burn_backend::ops::*;
use burn_backend::tensor::{BoolTensor, FloatTensor, IntTensor};

impl ModuleOps<Self> for Ascend {
    // BEGIN host fallbacks (generated from the required methods without a device form)
    fn conv2d(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Self> {
        let [stride, padding, dilation] = conv_lists(&options);
        on("conv2d", &x, |s, math| {
            acl::convolution_new(
                &x.tensor,
                &weight.tensor,
                bias.as_ref().map(|b| b.tensor.view()),
                &stride,
                &padding,
                &dilation,
                false,
                &[0i64, 0][..],
                options.groups as i64,
                *math,
                s,
            )
        })
    }

    fn conv2d_x_backward(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Self> {
        let shape = x.dims().to_vec();
        conv2d_backward(
            "conv2d_x_backward",
            &x,
            &weight,
            &output_grad,
            &options,
            0,
            &shape,
        )
    }

    fn conv2d_weight_backward(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Self> {
        let shape = weight.dims().to_vec();
        conv2d_backward(
            "conv2d_weight_backward",
            &x,
            &weight,
            &output_grad,
            &options,
            1,
            &shape,
        )
    }

    fn conv2d_bias_backward(
        _x: FloatTensor<Self>,
        _bias: FloatTensor<Self>,
        output_grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        // The bias gradient is the output gradient summed over batch and positions.
        on("conv2d_bias_backward", &output_grad, |s, _| {
            acl::reduce_sum_new(&output_grad.tensor, &[0i64, 2, 3][..], false, s)
        })
    }

    fn deform_conv2d(
        x: FloatTensor<Self>,
        offset: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        mask: Option<FloatTensor<Self>>,
        bias: Option<FloatTensor<Self>>,
        options: DeformConvOptions<2>,
    ) -> FloatTensor<Self> {
        host("deform_conv2d");
        let device = x.device;
        let dtype = x.dtype();
        up_as(
            Host::deform_conv2d(
                nd(x),
                nd(offset),
                nd(weight),
                mask.map(nd),
                bias.map(nd),
                options,
            ),
            &device,
            dtype,
        )
    }

    fn deform_conv2d_backward(
        x: FloatTensor<Self>,
        offset: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        mask: Option<FloatTensor<Self>>,
        bias: Option<FloatTensor<Self>>,
        output_grad: FloatTensor<Self>,
        options: DeformConvOptions<2>,
    ) -> DeformConv2dBackward<Self> {
        host("deform_conv2d_backward");
        let device = x.device;
        let r = Host::deform_conv2d_backward(
            nd(x),
            nd(offset),
            nd(weight),
            mask.map(nd),
            bias.map(nd),
            nd(output_grad),
            options,
        );
        DeformConv2dBackward::new(
            up(r.x_grad, &device),
            up(r.offset_grad, &device),
            up(r.weight_grad, &device),
            r.mask_grad.map(|g| up(g, &device)),
            r.bias_grad.map(|g| up(g, &device)),
        )
    }

    fn conv3d(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        options: ConvOptions<3>,
    ) -> FloatTensor<Self> {
        host("conv3d");
        let device = x.device;
        let dtype = x.dtype();
        up_as(
            Host::conv3d(nd(x), nd(weight), bias.map(nd), options),
            &device,
            dtype,
        )
    }

    fn conv_transpose2d(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        options: ConvTransposeOptions<2>,
    ) -> FloatTensor<Self> {
        host("conv_transpose2d");
        let device = x.device;
        let dtype = x.dtype();
        up_as(
            Host::conv_transpose2d(nd(x), nd(weight), bias.map(nd), options),
            &device,
            dtype,
        )
    }

    fn conv_transpose3d(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        options: ConvTransposeOptions<3>,
    ) -> FloatTensor<Self> {
        host("conv_transpose3d");
        let device = x.device;
        let dtype = x.dtype();
        up_as(
            Host::conv_transpose3d(nd(x), nd(weight), bias.map(nd), options),
            &device,
            dtype,
        )
    }

    fn avg_pool2d(
        x: FloatTensor<Self>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        count_include_pad: bool,
        ceil_mode: bool,
    ) -> FloatTensor<Self> {
        host("avg_pool2d");
        let device = x.device;
        let dtype = x.dtype();
        up_as(
            Host::avg_pool2d(
                nd(x),
                kernel_size,
                stride,
                padding,
                count_include_pad,
                ceil_mode,
            ),
            &device,
            dtype,
        )
    }

    fn avg_pool2d_backward(
        x: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        count_include_pad: bool,
        ceil_mode: bool,
    ) -> FloatTensor<Self> {
        host("avg_pool2d_backward");
        let device = x.device;
        let dtype = x.dtype();
        up_as(
            Host::avg_pool2d_backward(
                nd(x),
                nd(grad),
                kernel_size,
                stride,
                padding,
                count_include_pad,
                ceil_mode,
            ),
            &device,
            dtype,
        )
    }

    fn adaptive_avg_pool2d(x: FloatTensor<Self>, output_size: [usize; 2]) -> FloatTensor<Self> {
        host("adaptive_avg_pool2d");
        let device = x.device;
        let dtype = x.dtype();
        up_as(
            Host::adaptive_avg_pool2d(nd(x), output_size),
            &device,
            dtype,
        )
    }

    fn adaptive_avg_pool2d_backward(
        x: FloatTensor<Self>,
        grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        host("adaptive_avg_pool2d_backward");
        let device = x.device;
        let dtype = x.dtype();
        up_as(
            Host::adaptive_avg_pool2d_backward(nd(x), nd(grad)),
            &device,
            dtype,
        )
    }

    fn max_pool2d(
        x: FloatTensor<Self>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        dilation: [usize; 2],
        ceil_mode: bool,
    ) -> FloatTensor<Self> {
        if dilation != [1, 1] {
            host("max_pool2d");
            let (device, dtype) = (x.device, x.dtype());
            let t = Host::max_pool2d(nd(x), kernel_size, stride, padding, dilation, ceil_mode);
            return up_as(t, &device, dtype);
        }
        let window = [kernel_size, stride, padding, dilation];
        max_pool2d("max_pool2d", &x, window, ceil_mode).0
    }

    fn max_pool2d_with_indices(
        x: FloatTensor<Self>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        dilation: [usize; 2],
        ceil_mode: bool,
    ) -> MaxPool2dWithIndices<Self> {
        if dilation != [1, 1] {
            host("max_pool2d_with_indices");
            let (device, dtype) = (x.device, x.dtype());
            let r = Host::max_pool2d_with_indices(
                nd(x),
                kernel_size,
                stride,
                padding,
                dilation,
                ceil_mode,
            );
            return MaxPool2dWithIndices::new(
                up_as(r.output, &device, dtype),
                up(r.indices, &device),
            );
        }
        let window = [kernel_size, stride, padding, dilation];
        let (out, indices) = max_pool2d("max_pool2d_with_indices", &x, window, ceil_mode);
        MaxPool2dWithIndices::new(out, indices)
    }

    fn max_pool2d_with_indices_backward(
        x: FloatTensor<Self>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        dilation: [usize; 2],
        ceil_mode: bool,
        output_grad: FloatTensor<Self>,
        indices: IntTensor<Self>,
    ) -> MaxPool2dBackward<Self> {
        const WHAT: &str = "max_pool2d_with_indices_backward";
        if dilation != [1, 1] {
            host(WHAT);
            let (device, dtype) = (x.device, x.dtype());
            let r = Host::max_pool2d_with_indices_backward(
                nd(x),
                kernel_size,
                stride,
                padding,
                dilation,
                ceil_mode,
                nd(output_grad),
                nd(indices),
            );
            return MaxPool2dBackward::new(up_as(r.x_grad, &device, dtype));
        }
        let [k, s, p, d] = [kernel_size, stride, padding, dilation].map(|v| v.map(|e| e as i64));
        // The vendor's backward takes INT32 (or INT8) indices on Atlas A2/A3.
        let indices = cast(WHAT, indices, burn_backend::DType::I32);
        let grad = on(WHAT, &x, |st, _| {
            acl::max_pool2d_with_indices_backward_new(
                &output_grad.tensor,
                &x.tensor,
                &indices.tensor,
                &k[..],
                &s[..],
                &p[..],
                &d[..],
                ceil_mode,
                st,
            )
        });
        MaxPool2dBackward::new(grad)
    }

    fn interpolate(
        x: FloatTensor<Self>,
        output_size: [usize; 2],
        options: InterpolateOptions,
    ) -> FloatTensor<Self> {
        host("interpolate");
        let device = x.device;
        let dtype = x.dtype();
        up_as(
            Host::interpolate(nd(x), output_size, options),
            &device,
            dtype,
        )
    }

    fn interpolate_backward(
        x: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        output_size: [usize; 2],
        options: InterpolateOptions,
    ) -> FloatTensor<Self> {
        host("interpolate_backward");
        let device = x.device;
        let dtype = x.dtype();
        up_as(
            Host::interpolate_backward(nd(x), nd(grad), output_size, options),
            &device,
            dtype,
        )
    }

    fn attention(
        query: FloatTensor<Self>,
        key: FloatTensor<Self>,
        value: FloatTensor<Self>,
        mask: Option<BoolTensor<Self>>,
        attn_bias: Option<FloatTensor<Self>>,
        options: AttentionModuleOptions,
    ) -> FloatTensor<Self> {
        host("attention");
        let device = query.device;
        let dtype = query.dtype();
        up_as(
            Host::attention(
                nd(query),
                nd(key),
                nd(value),
                mask.map(nd),
                attn_bias.map(nd),
                options,
            ),
            &device,
            dtype,
        )
    }

    fn rfft(
        signal: FloatTensor<Self>,
        dim: usize,
        n: Option<usize>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        host("rfft");
        let device = signal.device;
        let (a, b) = Host::rfft(nd(signal), dim, n);
        (up(a, &device), up(b, &device))
    }

    fn irfft(
        spectrum_re: FloatTensor<Self>,
        spectrum_im: FloatTensor<Self>,
        dim: usize,
        n: Option<usize>,
    ) -> FloatTensor<Self> {
        host("irfft");
        let device = spectrum_re.device;
        let dtype = spectrum_re.dtype();
        up_as(
            Host::irfft(nd(spectrum_re), nd(spectrum_im), dim, n),
            &device,
            dtype,
        )
    }
    // END host fallbacks
}

/// The stride, padding and dilation of `options` as the crate's int lists.
fn conv_lists(options: &ConvOptions<2>) -> [Vec<i64>; 3] {
    [options.stride, options.padding, options.dilation]
        .map(|v| v.iter().map(|&e| e as i64).collect())
}

/// One gradient of a 2-D convolution (`aclnnConvolutionBackward` with one output in its
/// mask): `which` 0 for the input's, 1 for the weight's, into a new tensor of `shape`.
fn conv2d_backward(
    what: &str,
    x: &AscendTensor,
    weight: &AscendTensor,
    output_grad: &AscendTensor,
    options: &ConvOptions<2>,
    which: usize,
    shape: &[usize],
) -> AscendTensor {
    let [stride, padding, dilation] = conv_lists(options);
    let spec = acl::reference::ConvSpec {
        stride: &stride,
        padding: &padding,
        dilation: &dilation,
        transposed: false,
        output_padding: &[0, 0],
        groups: options.groups as i64,
    };
    let dtype = if which == 0 {
        x.dtype_burn()
    } else {
        weight.dtype_burn()
    };
    let mut grad = super::base::empty(shape, dtype, &x.device);
    let ctx = x.ctx();
    let mut mask = [false; 3];
    mask[which] = true;
    let (mut gi, mut gw) = (None, None);
    if which == 0 {
        gi = Some(grad.tensor.view_mut());
    } else {
        gw = Some(grad.tensor.view_mut());
    }
    ok(
        what,
        acl::convolution_backward(
            &output_grad.tensor,
            &x.tensor,
            &weight.tensor,
            None,
            &spec,
            mask,
            ctx.math,
            gi,
            gw,
            None::<acl::TensorViewMut<'_, acl::Dyn>>,
            &ctx.stream,
        ),
    );
    grad
}

/// 2-D max pooling on the device (`aclnnMaxPool2dWithIndices`, whose dilation is 1 on
/// Atlas A2/A3: the methods run a dilated pooling on the host): the pooled tensor and
/// the flat `h·W + w` index of each maximum in its plane, as burn defines them. The
/// indices are INT32, the dtype the vendor's backward takes on Atlas A2/A3.
fn max_pool2d(
    what: &str,
    x: &AscendTensor,
    window: [[usize; 2]; 4],
    ceil_mode: bool,
) -> (AscendTensor, AscendTensor) {
    let [k, s, p, d] = window.map(|v| v.map(|e| e as i64));
    let ctx = x.ctx();
    let (out, indices): (acl::Tensor, acl::DeviceTensor<i32>) = ok(
        what,
        acl::max_pool2d_with_indices_new(
            &x.tensor,
            &k[..],
            &s[..],
            &p[..],
            &d[..],
            ceil_mode,
            &ctx.stream,
        ),
    );
    (
        AscendTensor::new(out, x.device),
        AscendTensor::new(indices.into(), x.device),
    )
}
