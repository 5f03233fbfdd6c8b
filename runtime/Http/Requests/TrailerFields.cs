using System;
using System.Text;

namespace Falconet.Http;

/// <summary>
/// The fields a request must never send as trailers (RFC 9110 section 6.5.1): the server needs each of them before
/// the content, to frame, route, authenticate or interpret the request, so one arriving after the body is refused.
/// docs/http-parsing.md lists them with the reason for each.
/// </summary>
internal static class TrailerFields
{
    private static readonly byte[][] s_forbidden =
    [
        // Framing (RFC 9112 sections 6 and 7, RFC 9110 section 6.6.2).
        .. Bytes("Content-Length", "Transfer-Encoding", "Trailer"),

        // Routing and connection handling (RFC 9110 section 7.2, RFC 9110 section 7.6, RFC 9112 section 9).
        .. Bytes("Host", "Connection", "Keep-Alive", "Upgrade", "TE", "Max-Forwards"),

        // Authentication (RFC 9110 section 11, RFC 6265).
        .. Bytes("Authorization", "Proxy-Authorization", "Cookie"),

        // Request modifiers: controls and conditionals (RFC 9110 sections 10.1 and 13).
        .. Bytes("Expect", "Range", "If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since", "If-Range",
            "Cache-Control", "Pragma"),

        // How to process the content (RFC 9110 section 8).
        .. Bytes("Content-Type", "Content-Encoding", "Content-Range", "Content-Language", "Content-Location"),
    ];

    /// <summary>True when <paramref name="name"/> (a token, any case) is a field that must not be a trailer.</summary>
    public static bool IsForbidden(ReadOnlySpan<byte> name)
    {
        foreach (byte[] forbidden in s_forbidden)
        {
            if (Ascii.EqualsIgnoreCase(name, forbidden))
            {
                return true;
            }
        }

        return false;
    }

    private static byte[][] Bytes(params string[] names) => Array.ConvertAll(names, Encoding.ASCII.GetBytes);
}
