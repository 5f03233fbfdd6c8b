using System;
using System.Runtime.CompilerServices;
using Falconet.Text;
using Microsoft.Extensions.Primitives;

namespace Falconet.Http.Http1;

/// <summary>Decides, once the header section is complete, how the request body is framed; rejects ambiguous framing.</summary>
public static class RequestFraming
{
    /// <summary>Returns the body framing; <paramref name="contentLength"/> is the declared length, 0 without a body, -1 when chunked.</summary>
    /// <exception cref="BadHttpRequestException">400 for Transfer-Encoding with Content-Length, on HTTP/1.0, or not ending in a single
    /// "chunked"; 501 for any other transfer coding; 413 when Content-Length passes <see cref="HttpLimits.MaxRequestBodySize"/>.</exception>
    public static RequestBodyKind Determine(RequestHeaders headers, KnownVersion version, HttpLimits limits, out long contentLength)
    {
        if (HasNoFramingHeaders(headers))
        {
            contentLength = 0;
            return RequestBodyKind.None;
        }

        StringValues transferEncoding = headers.TransferEncoding;
        if (transferEncoding.Count > 0)
        {
            contentLength = -1;
            if (version == KnownVersion.Http10)
            {
                // RFC 9112 section 6.1: an HTTP/1.0 request with Transfer-Encoding has faulty framing.
                BadHttpRequestException.Throw(RequestRejectionReason.TransferEncodingOnHttp10);
            }

            if (headers.ContentLength is not null)
            {
                // RFC 9112 section 6.3: both headers present is a request smuggling attempt or a broken client.
                BadHttpRequestException.Throw(RequestRejectionReason.TransferEncodingWithContentLength);
            }

            CheckTransferCodings(transferEncoding);
            return RequestBodyKind.Chunked;
        }

        contentLength = headers.ContentLength ?? 0;
        if (contentLength > limits.MaxRequestBodySize)
        {
            BadHttpRequestException.Throw(RequestRejectionReason.BodyTooLarge);
        }

        return contentLength > 0 ? RequestBodyKind.ContentLength : RequestBodyKind.None;
    }

    /// <summary>
    /// True when the head has neither Transfer-Encoding nor Content-Length: no body, and nothing <see cref="Determine"/> could
    /// reject (RFC 9112 section 6.3: a request without either has a body of length zero).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool HasNoFramingHeaders(RequestHeaders headers) => headers.ContentLength is null && headers.TransferEncoding.Count == 0;

    /// <summary>Checks that the codings, over every Transfer-Encoding line in order, end in one "chunked" and hold nothing unknown.</summary>
    private static void CheckTransferCodings(StringValues transferEncoding)
    {
        bool sawChunked = false;
        bool lastIsChunked = false;
        bool sawUnknown = false;
        for (int i = 0; i < transferEncoding.Count; i++)
        {
            ReadOnlySpan<char> list = transferEncoding[i];
            while (true)
            {
                int comma = list.IndexOf(',');
                ReadOnlySpan<char> element = (comma < 0 ? list : list[..comma]).Trim(" \t");
                if (!element.IsEmpty)
                {
                    int semicolon = element.IndexOf(';');
                    ReadOnlySpan<char> coding = (semicolon < 0 ? element : element[..semicolon]).TrimEnd(" \t");
                    if (!IsToken(coding))
                    {
                        BadHttpRequestException.Throw(RequestRejectionReason.InvalidTransferCoding);
                    }

                    lastIsChunked = coding.Equals("chunked", StringComparison.OrdinalIgnoreCase);
                    if (lastIsChunked)
                    {
                        if (sawChunked || semicolon >= 0)
                        {
                            // RFC 9112 section 7: chunked is applied once and takes no parameters.
                            BadHttpRequestException.Throw(RequestRejectionReason.ChunkedTwiceOrWithParameters);
                        }

                        sawChunked = true;
                    }
                    else
                    {
                        sawUnknown = true;
                    }
                }

                if (comma < 0)
                {
                    break;
                }

                list = list[(comma + 1)..];
            }
        }

        if (!lastIsChunked)
        {
            // RFC 9112 section 6.3: a request whose final transfer coding is not chunked cannot be framed.
            BadHttpRequestException.Throw(RequestRejectionReason.ChunkedNotFinal);
        }

        if (sawUnknown)
        {
            // RFC 9112 section 6.1: a transfer coding the server does not understand answers 501.
            BadHttpRequestException.Throw(RequestRejectionReason.UnsupportedTransferCoding);
        }
    }

    private static bool IsToken(ReadOnlySpan<char> text)
    {
        if (text.IsEmpty)
        {
            return false;
        }

        foreach (char c in text)
        {
            if (c > 0x7F || !HttpCharacters.IsTokenChar((byte)c))
            {
                return false;
            }
        }

        return true;
    }
}
