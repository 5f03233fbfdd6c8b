namespace Falconet.Http;

/// <summary>The error codes of RFC 9113 section 7, carried by RST_STREAM and GOAWAY frames.</summary>
public enum Http2ErrorCode : uint
{
    /// <summary>Not an error: a graceful GOAWAY, or a stream the server no longer needs the rest of (RFC 9113 section 8.1).</summary>
    NoError = 0x0,

    /// <summary>A protocol error with no more specific code.</summary>
    ProtocolError = 0x1,

    /// <summary>An unexpected internal error, such as a handler that failed after its response started.</summary>
    InternalError = 0x2,

    /// <summary>The peer violated the flow-control protocol.</summary>
    FlowControlError = 0x3,

    /// <summary>A SETTINGS frame was not acknowledged in time.</summary>
    SettingsTimeout = 0x4,

    /// <summary>A frame arrived after the stream was half-closed or closed.</summary>
    StreamClosed = 0x5,

    /// <summary>A frame had an invalid size.</summary>
    FrameSizeError = 0x6,

    /// <summary>The stream was refused before any processing: the client can retry it.</summary>
    RefusedStream = 0x7,

    /// <summary>The stream is no longer needed.</summary>
    Cancel = 0x8,

    /// <summary>The header compression context could not be maintained.</summary>
    CompressionError = 0x9,

    /// <summary>A CONNECT tunnel was reset or closed abnormally.</summary>
    ConnectError = 0xa,

    /// <summary>The peer generates excessive load (a flood the server bounds).</summary>
    EnhanceYourCalm = 0xb,

    /// <summary>The transport does not meet the minimum security requirements (RFC 9113 section 9.2).</summary>
    InadequateSecurity = 0xc,

    /// <summary>The request must be retried over HTTP/1.1.</summary>
    Http11Required = 0xd,
}
