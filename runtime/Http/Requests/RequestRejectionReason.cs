namespace Falconet.Http;

/// <summary>Why the server refused a request; <see cref="RequestRejections"/> holds each reason's status, message and metric name.</summary>
public enum RequestRejectionReason : byte
{
    // Request line (RFC 9112 section 3).

    /// <summary>A CR before the request line that is not followed by LF.</summary>
    BareCarriageReturnBeforeRequestLine,

    /// <summary>Empty lines before the request line reached the request-line limit.</summary>
    TooManyEmptyLines,

    /// <summary>The request line is longer than <see cref="HttpLimits.MaxRequestLineSize"/>.</summary>
    RequestLineTooLong,

    /// <summary>The method is not a token followed by SP.</summary>
    InvalidMethod,

    /// <summary>The method token is longer than any method the server implements.</summary>
    MethodTooLong,

    /// <summary>More than one SP between the method and the target.</summary>
    ExtraSpaceBeforeTarget,

    /// <summary>The request line ends after the target.</summary>
    MissingVersion,

    /// <summary>The target holds a control, space or non-ASCII byte.</summary>
    InvalidTargetCharacter,

    /// <summary>The target holds a fragment ('#').</summary>
    TargetWithFragment,

    /// <summary>The asterisk-form target with a method other than OPTIONS.</summary>
    AsteriskFormWithoutOptions,

    /// <summary>CONNECT without an authority-form target (host:port).</summary>
    ConnectWithoutAuthorityForm,

    /// <summary>A target in no form the server accepts (another scheme, a bad authority).</summary>
    InvalidTarget,

    /// <summary>The version is not "HTTP/" DIGIT "." DIGIT followed by CRLF.</summary>
    InvalidVersion,

    /// <summary>The request line ends with a bare LF.</summary>
    RequestLineBareLineFeed,

    /// <summary>A well-formed version of another major version than 1.</summary>
    UnsupportedVersion,

    // Header section (RFC 9112 section 5, RFC 9110 section 5).

    /// <summary>A field line that starts with whitespace (obs-fold).</summary>
    ObsFold,

    /// <summary>A field line with an empty name.</summary>
    EmptyHeaderName,

    /// <summary>A byte in a field name that is not a tchar.</summary>
    InvalidHeaderNameCharacter,

    /// <summary>Whitespace between a field name and its colon.</summary>
    WhitespaceBeforeColon,

    /// <summary>A field line without a colon.</summary>
    HeaderLineWithoutColon,

    /// <summary>A control byte other than HTAB, or DEL, in a field value.</summary>
    InvalidHeaderValueCharacter,

    /// <summary>A bare CR in the header section.</summary>
    HeaderBareCarriageReturn,

    /// <summary>A bare LF in the header section.</summary>
    HeaderBareLineFeed,

    /// <summary>A field value the header collection refused (a malformed or conflicting Content-Length).</summary>
    InvalidHeaderValue,

    /// <summary>More fields than <see cref="HttpLimits.MaxRequestHeaderCount"/>.</summary>
    TooManyHeaders,

    /// <summary>A header section larger than <see cref="HttpLimits.MaxRequestHeadersSize"/>.</summary>
    HeadersTooLarge,

    // Host and Expect (RFC 9112 section 3.2, RFC 9110 section 10.1.1).

    /// <summary>An HTTP/1.1 request without Host.</summary>
    MissingHost,

    /// <summary>More than one Host field.</summary>
    MultipleHost,

    /// <summary>A Host value that is not a valid authority.</summary>
    InvalidHost,

    /// <summary>An empty Host value with an origin-form or asterisk-form target.</summary>
    EmptyHost,

    /// <summary>An expectation other than 100-continue.</summary>
    UnsupportedExpectation,

    // Method semantics.

    /// <summary>CONNECT to a server whose application does not tunnel.</summary>
    ConnectNotSupported,

    // Framing (RFC 9112 section 6).

    /// <summary>Transfer-Encoding on an HTTP/1.0 request.</summary>
    TransferEncodingOnHttp10,

    /// <summary>Transfer-Encoding and Content-Length together.</summary>
    TransferEncodingWithContentLength,

    /// <summary>A transfer coding that is not a token.</summary>
    InvalidTransferCoding,

    /// <summary>The transfer codings do not end in chunked.</summary>
    ChunkedNotFinal,

    /// <summary>chunked applied twice, or with parameters.</summary>
    ChunkedTwiceOrWithParameters,

    /// <summary>A transfer coding other than chunked.</summary>
    UnsupportedTransferCoding,

    /// <summary>A body larger than <see cref="HttpLimits.MaxRequestBodySize"/>.</summary>
    BodyTooLarge,

    // Chunked coding (RFC 9112 section 7.1).

    /// <summary>A chunk size that is not 1 to 16 hexadecimal digits.</summary>
    InvalidChunkSize,

    /// <summary>A chunk size above 2^63-1.</summary>
    ChunkSizeOverflow,

    /// <summary>A chunk extension outside the RFC 9112 grammar.</summary>
    InvalidChunkExtension,

    /// <summary>A chunk extension longer than <see cref="HttpLimits.MaxChunkExtensionSize"/>.</summary>
    ChunkExtensionTooLong,

    /// <summary>A bare CR in a chunk-size line.</summary>
    ChunkSizeLineBareCarriageReturn,

    /// <summary>Chunk data not followed by exactly CRLF.</summary>
    ChunkDataWithoutCrlf,

    /// <summary>A trailer field whose presence there is a framing or routing hazard (RFC 9110 section 6.5.1; docs/http-parsing.md).</summary>
    ForbiddenTrailerField,

    // Body.

    /// <summary>The connection ended before the body was complete.</summary>
    UnexpectedEndOfBody,

    /// <summary>The body arrived slower than the minimum request-body data rate (FalconetServerOptions.MinRequestBodyDataRate).</summary>
    RequestBodyTooSlow,
}
