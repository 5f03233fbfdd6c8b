using System;

namespace Falconet.Http.Http2;

/// <summary>
/// Why the server ended an HTTP/2 connection or stream with an error: each reason has its RFC 9113 error code and a stable
/// snake_case name, logged and counted (<c>falconet.server.http2.connection_errors</c>, <c>falconet.server.http2.stream_errors</c>).
/// </summary>
internal enum Http2ErrorReason : byte
{
    // Connection errors (GOAWAY, then the connection closes).
    InvalidPreface,
    FrameTooLarge,
    InvalidFrameLength,
    InvalidStreamId,
    EvenStreamId,
    StreamIdNotIncreasing,
    FrameOnIdleStream,
    HeaderBlockInterrupted,
    UnexpectedContinuation,
    InvalidPadding,
    InvalidSetting,
    WindowOverflow,
    ZeroWindowIncrement,
    FlowControlViolated,
    FrameOnClosedStream,
    PushPromise,
    CompressionError,
    HeaderBlockTooLarge,
    TooManyContinuationFrames,
    StreamResetRate,
    ControlFrameRate,
    EmptyFrameRate,
    SettingsTimeout,
    InadequateSecurity,
    RequestHeadersTimeout,

    // Stream errors (RST_STREAM; the connection goes on).
    MalformedRequest,
    FrameAfterEndStream,
    HeadersWithoutEndStream,
    SelfDependency,
    MaxConcurrentStreams,
    MinResponseDataRate,
    ApplicationReset,
    ApplicationError,
}

/// <summary>The one table of <see cref="Http2ErrorReason"/>: error code and stable name.</summary>
internal static class Http2Errors
{
    public static Http2ErrorCode GetCode(Http2ErrorReason reason) => reason switch
    {
        Http2ErrorReason.InvalidPreface => Http2ErrorCode.ProtocolError,
        Http2ErrorReason.FrameTooLarge => Http2ErrorCode.FrameSizeError,
        Http2ErrorReason.InvalidFrameLength => Http2ErrorCode.FrameSizeError,
        Http2ErrorReason.InvalidStreamId => Http2ErrorCode.ProtocolError,
        Http2ErrorReason.EvenStreamId => Http2ErrorCode.ProtocolError,
        Http2ErrorReason.StreamIdNotIncreasing => Http2ErrorCode.ProtocolError,
        Http2ErrorReason.FrameOnIdleStream => Http2ErrorCode.ProtocolError,
        Http2ErrorReason.HeaderBlockInterrupted => Http2ErrorCode.ProtocolError,
        Http2ErrorReason.UnexpectedContinuation => Http2ErrorCode.ProtocolError,
        Http2ErrorReason.InvalidPadding => Http2ErrorCode.ProtocolError,
        Http2ErrorReason.InvalidSetting => Http2ErrorCode.ProtocolError,
        Http2ErrorReason.WindowOverflow => Http2ErrorCode.FlowControlError,
        Http2ErrorReason.ZeroWindowIncrement => Http2ErrorCode.ProtocolError,
        Http2ErrorReason.FlowControlViolated => Http2ErrorCode.FlowControlError,
        Http2ErrorReason.FrameOnClosedStream => Http2ErrorCode.StreamClosed,
        Http2ErrorReason.PushPromise => Http2ErrorCode.ProtocolError,
        Http2ErrorReason.CompressionError => Http2ErrorCode.CompressionError,
        Http2ErrorReason.HeaderBlockTooLarge => Http2ErrorCode.EnhanceYourCalm,
        Http2ErrorReason.TooManyContinuationFrames => Http2ErrorCode.EnhanceYourCalm,
        Http2ErrorReason.StreamResetRate => Http2ErrorCode.EnhanceYourCalm,
        Http2ErrorReason.ControlFrameRate => Http2ErrorCode.EnhanceYourCalm,
        Http2ErrorReason.EmptyFrameRate => Http2ErrorCode.EnhanceYourCalm,
        Http2ErrorReason.SettingsTimeout => Http2ErrorCode.SettingsTimeout,
        Http2ErrorReason.InadequateSecurity => Http2ErrorCode.InadequateSecurity,
        Http2ErrorReason.RequestHeadersTimeout => Http2ErrorCode.EnhanceYourCalm,
        Http2ErrorReason.MalformedRequest => Http2ErrorCode.ProtocolError,
        Http2ErrorReason.FrameAfterEndStream => Http2ErrorCode.StreamClosed,
        Http2ErrorReason.HeadersWithoutEndStream => Http2ErrorCode.ProtocolError,
        Http2ErrorReason.SelfDependency => Http2ErrorCode.ProtocolError,
        Http2ErrorReason.MaxConcurrentStreams => Http2ErrorCode.RefusedStream,
        Http2ErrorReason.MinResponseDataRate => Http2ErrorCode.Cancel,
        Http2ErrorReason.ApplicationReset => Http2ErrorCode.InternalError,
        Http2ErrorReason.ApplicationError => Http2ErrorCode.InternalError,
        _ => throw new ArgumentOutOfRangeException(nameof(reason), reason, null),
    };

    public static string GetName(Http2ErrorReason reason) => reason switch
    {
        Http2ErrorReason.InvalidPreface => "invalid_preface",
        Http2ErrorReason.FrameTooLarge => "frame_too_large",
        Http2ErrorReason.InvalidFrameLength => "invalid_frame_length",
        Http2ErrorReason.InvalidStreamId => "invalid_stream_id",
        Http2ErrorReason.EvenStreamId => "even_stream_id",
        Http2ErrorReason.StreamIdNotIncreasing => "stream_id_not_increasing",
        Http2ErrorReason.FrameOnIdleStream => "frame_on_idle_stream",
        Http2ErrorReason.HeaderBlockInterrupted => "header_block_interrupted",
        Http2ErrorReason.UnexpectedContinuation => "unexpected_continuation",
        Http2ErrorReason.InvalidPadding => "invalid_padding",
        Http2ErrorReason.InvalidSetting => "invalid_setting",
        Http2ErrorReason.WindowOverflow => "window_overflow",
        Http2ErrorReason.ZeroWindowIncrement => "zero_window_increment",
        Http2ErrorReason.FlowControlViolated => "flow_control_violated",
        Http2ErrorReason.FrameOnClosedStream => "frame_on_closed_stream",
        Http2ErrorReason.PushPromise => "push_promise",
        Http2ErrorReason.CompressionError => "compression_error",
        Http2ErrorReason.HeaderBlockTooLarge => "header_block_too_large",
        Http2ErrorReason.TooManyContinuationFrames => "too_many_continuation_frames",
        Http2ErrorReason.StreamResetRate => "stream_reset_rate",
        Http2ErrorReason.ControlFrameRate => "control_frame_rate",
        Http2ErrorReason.EmptyFrameRate => "empty_frame_rate",
        Http2ErrorReason.SettingsTimeout => "settings_timeout",
        Http2ErrorReason.InadequateSecurity => "inadequate_security",
        Http2ErrorReason.RequestHeadersTimeout => "request_headers_timeout",
        Http2ErrorReason.MalformedRequest => "malformed_request",
        Http2ErrorReason.FrameAfterEndStream => "frame_after_end_stream",
        Http2ErrorReason.HeadersWithoutEndStream => "headers_without_end_stream",
        Http2ErrorReason.SelfDependency => "self_dependency",
        Http2ErrorReason.MaxConcurrentStreams => "max_concurrent_streams",
        Http2ErrorReason.MinResponseDataRate => "min_response_data_rate",
        Http2ErrorReason.ApplicationReset => "application_reset",
        Http2ErrorReason.ApplicationError => "application_error",
        _ => throw new ArgumentOutOfRangeException(nameof(reason), reason, null),
    };

    /// <summary>The code as RFC 9113 names it ("PROTOCOL_ERROR"), for logs and the metric tag.</summary>
    public static string GetCodeName(Http2ErrorCode code) => code switch
    {
        Http2ErrorCode.NoError => "NO_ERROR",
        Http2ErrorCode.ProtocolError => "PROTOCOL_ERROR",
        Http2ErrorCode.InternalError => "INTERNAL_ERROR",
        Http2ErrorCode.FlowControlError => "FLOW_CONTROL_ERROR",
        Http2ErrorCode.SettingsTimeout => "SETTINGS_TIMEOUT",
        Http2ErrorCode.StreamClosed => "STREAM_CLOSED",
        Http2ErrorCode.FrameSizeError => "FRAME_SIZE_ERROR",
        Http2ErrorCode.RefusedStream => "REFUSED_STREAM",
        Http2ErrorCode.Cancel => "CANCEL",
        Http2ErrorCode.CompressionError => "COMPRESSION_ERROR",
        Http2ErrorCode.ConnectError => "CONNECT_ERROR",
        Http2ErrorCode.EnhanceYourCalm => "ENHANCE_YOUR_CALM",
        Http2ErrorCode.InadequateSecurity => "INADEQUATE_SECURITY",
        Http2ErrorCode.Http11Required => "HTTP_1_1_REQUIRED",
        _ => "UNKNOWN",
    };
}

/// <summary>A connection error found while processing received frames: the connection answers with GOAWAY and closes.</summary>
internal sealed class Http2ConnectionException : Exception
{
    public Http2ConnectionException(Http2ErrorReason reason, string message)
        : base(message)
    {
        Reason = reason;
    }

    public Http2ErrorReason Reason { get; }

    public Http2ErrorCode Code => Http2Errors.GetCode(Reason);

    public static void Throw(Http2ErrorReason reason, string message) => throw new Http2ConnectionException(reason, message);
}
