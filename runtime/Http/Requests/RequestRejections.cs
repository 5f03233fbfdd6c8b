using System;

namespace Falconet.Http;

/// <summary>The one table of request rejections: each reason's HTTP status, stable metric name and log message.</summary>
public static class RequestRejections
{
    /// <summary>The status the server answers for <paramref name="reason"/>.</summary>
    public static int GetStatusCode(RequestRejectionReason reason) => Describe(reason).StatusCode;

    /// <summary>The reason as a stable snake_case name: the value of the metric tag and of the log's Reason field.</summary>
    public static string GetName(RequestRejectionReason reason) => Describe(reason).Name;

    /// <summary>A constant sentence for logs; it never echoes request bytes.</summary>
    public static string GetMessage(RequestRejectionReason reason) => Describe(reason).Message;

    // Without a default arm, a reason added to the enum and not here is a compile error (CS8509); CS8524 is about
    // values outside the enum, which a cast alone can make and which the default arm below could not name anyway.
#pragma warning disable CS8524
    private static Entry Describe(RequestRejectionReason reason) => reason switch
    {
        RequestRejectionReason.BareCarriageReturnBeforeRequestLine => new(400, "bare_cr_before_request_line", "A CR before the request line is not followed by LF."),
        RequestRejectionReason.TooManyEmptyLines => new(400, "too_many_empty_lines", "Empty lines before the request line reach the request-line limit."),
        RequestRejectionReason.RequestLineTooLong => new(414, "request_line_too_long", "Request line too long."),
        RequestRejectionReason.InvalidMethod => new(400, "invalid_method", "Invalid request method."),
        RequestRejectionReason.MethodTooLong => new(501, "method_too_long", "Request method longer than any the server implements."),
        RequestRejectionReason.ExtraSpaceBeforeTarget => new(400, "extra_space_before_target", "Request line has more than one SP before the target."),
        RequestRejectionReason.MissingVersion => new(400, "missing_version", "Request line has no HTTP version."),
        RequestRejectionReason.InvalidTargetCharacter => new(400, "invalid_target_character", "Request target contains a control, space or non-ASCII byte."),
        RequestRejectionReason.TargetWithFragment => new(400, "target_with_fragment", "Request target contains a fragment."),
        RequestRejectionReason.AsteriskFormWithoutOptions => new(400, "asterisk_form_without_options", "The asterisk-form target is allowed only with OPTIONS."),
        RequestRejectionReason.ConnectWithoutAuthorityForm => new(400, "connect_without_authority_form", "CONNECT requires an authority-form target (host:port)."),
        RequestRejectionReason.InvalidTarget => new(400, "invalid_target", "Invalid request target."),
        RequestRejectionReason.InvalidVersion => new(400, "invalid_version", "Invalid HTTP version."),
        RequestRejectionReason.RequestLineBareLineFeed => new(400, "request_line_bare_lf", "Request line ends with a bare LF."),
        RequestRejectionReason.UnsupportedVersion => new(505, "unsupported_version", "HTTP version not supported."),
        RequestRejectionReason.ObsFold => new(400, "obs_fold", "Header line starts with whitespace (obs-fold)."),
        RequestRejectionReason.EmptyHeaderName => new(400, "empty_header_name", "Header field name is empty."),
        RequestRejectionReason.InvalidHeaderNameCharacter => new(400, "invalid_header_name_character", "Header field name contains an invalid character."),
        RequestRejectionReason.WhitespaceBeforeColon => new(400, "whitespace_before_colon", "Whitespace between header field name and colon."),
        RequestRejectionReason.HeaderLineWithoutColon => new(400, "header_line_without_colon", "Header line has no colon."),
        RequestRejectionReason.InvalidHeaderValueCharacter => new(400, "invalid_header_value_character", "Header value contains a control character."),
        RequestRejectionReason.HeaderBareCarriageReturn => new(400, "header_bare_cr", "Header section contains a bare CR."),
        RequestRejectionReason.HeaderBareLineFeed => new(400, "header_bare_lf", "Header section contains a bare LF."),
        RequestRejectionReason.InvalidHeaderValue => new(400, "invalid_header_value", "Invalid request header value (a malformed or conflicting Content-Length)."),
        RequestRejectionReason.TooManyHeaders => new(431, "too_many_headers", "Too many request headers."),
        RequestRejectionReason.HeadersTooLarge => new(431, "headers_too_large", "Request header section too large."),
        RequestRejectionReason.MissingHost => new(400, "missing_host", "HTTP/1.1 request without a Host header."),
        RequestRejectionReason.MultipleHost => new(400, "multiple_host", "More than one Host header."),
        RequestRejectionReason.InvalidHost => new(400, "invalid_host", "Invalid Host header."),
        RequestRejectionReason.EmptyHost => new(400, "empty_host", "Empty Host header with an origin-form or asterisk-form target."),
        RequestRejectionReason.UnsupportedExpectation => new(417, "unsupported_expectation", "Unsupported expectation."),
        RequestRejectionReason.ConnectNotSupported => new(501, "connect_not_supported", "CONNECT is not supported: the server does not tunnel."),
        RequestRejectionReason.TransferEncodingOnHttp10 => new(400, "transfer_encoding_on_http10", "Transfer-Encoding is not allowed on an HTTP/1.0 request."),
        RequestRejectionReason.TransferEncodingWithContentLength => new(400, "transfer_encoding_with_content_length", "Both Transfer-Encoding and Content-Length are present."),
        RequestRejectionReason.InvalidTransferCoding => new(400, "invalid_transfer_coding", "Invalid transfer coding."),
        RequestRejectionReason.ChunkedNotFinal => new(400, "chunked_not_final", "Transfer-Encoding does not end in chunked."),
        RequestRejectionReason.ChunkedTwiceOrWithParameters => new(400, "chunked_twice_or_with_parameters", "The chunked transfer coding appears twice or with parameters."),
        RequestRejectionReason.UnsupportedTransferCoding => new(501, "unsupported_transfer_coding", "Unsupported transfer coding."),
        RequestRejectionReason.BodyTooLarge => new(413, "body_too_large", "Request body too large."),
        RequestRejectionReason.InvalidChunkSize => new(400, "invalid_chunk_size", "Chunk size is not a hexadecimal number."),
        RequestRejectionReason.ChunkSizeOverflow => new(400, "chunk_size_overflow", "Chunk size overflows."),
        RequestRejectionReason.InvalidChunkExtension => new(400, "invalid_chunk_extension", "Chunk extension does not follow the RFC 9112 grammar."),
        RequestRejectionReason.ChunkExtensionTooLong => new(400, "chunk_extension_too_long", "Chunk extension too long."),
        RequestRejectionReason.ChunkSizeLineBareCarriageReturn => new(400, "chunk_size_line_bare_cr", "Chunk size line contains a bare CR."),
        RequestRejectionReason.ChunkDataWithoutCrlf => new(400, "chunk_data_without_crlf", "Chunk data is not followed by CRLF."),
        RequestRejectionReason.ForbiddenTrailerField => new(400, "forbidden_trailer_field", "A trailer field that framing or routing depends on."),
        RequestRejectionReason.UnexpectedEndOfBody => new(400, "unexpected_end_of_body", "Unexpected end of request body."),
        RequestRejectionReason.RequestBodyTooSlow => new(408, "request_body_too_slow", "The request body arrived slower than the minimum data rate."),
    };
#pragma warning restore CS8524

    private readonly record struct Entry(int StatusCode, string Name, string Message);
}
