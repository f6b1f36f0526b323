//! `ModuleOps`: convolutions, pooling, interpolation, attention and FFTs. None has an
//! Ascend operator in the crate yet, so all run on the host (counted).

use crate::Ascend;
use crate::fallback::{Host, host, nd, up, up_as};
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
        host("conv2d");
        let device = x.device;
        let dtype = x.dtype();
        up_as(
            Host::conv2d(nd(x), nd(weight), bias.map(nd), options),
            &device,
            dtype,
        )
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
        host("max_pool2d");
        let device = x.device;
        let dtype = x.dtype();
        up_as(
            Host::max_pool2d(nd(x), kernel_size, stride, padding, dilation, ceil_mode),
            &device,
            dtype,
        )
    }

    fn max_pool2d_with_indices(
        x: FloatTensor<Self>,
        kernel_size: [usize; 2],
        stride: [usize; 2],
        padding: [usize; 2],
        dilation: [usize; 2],
        ceil_mode: bool,
    ) -> MaxPool2dWithIndices<Self> {
        host("max_pool2d_with_indices");
        let device = x.device;
        let r =
            Host::max_pool2d_with_indices(nd(x), kernel_size, stride, padding, dilation, ceil_mode);
        MaxPool2dWithIndices::new(up(r.output, &device), up(r.indices, &device))
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
        host("max_pool2d_with_indices_backward");
        let device = x.device;
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
        MaxPool2dBackward::new(up(r.x_grad, &device))
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
