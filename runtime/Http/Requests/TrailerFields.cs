using System;
using System.Text;

namespace Falconet.Http;

/// <summary>
/// The fields a request's trailer section must not carry: those whose presence there is a framing or routing hazard. RFC
/// 9110 section 6.5.1 forbids merging trailers into the header section, and Falconet keeps them apart
/// (<see cref="HttpRequest.Trailers"/>); but a recipient down the line that merges them anyway would frame, route or
/// handle the connection by a field the client placed after the body, so these are refused rather than kept.
/// docs/http-parsing.md lists them with the reason for each.
/// </summary>
internal static class TrailerFields
{
    private static readonly byte[][] s_forbidden =
    [
        // Framing: they delimit the message (RFC 9112 sections 6 and 7); merged, they re-frame it (request smuggling).
        .. Bytes("Content-Length", "Transfer-Encoding"),

        // Routing: the target's authority (RFC 9110 section 7.2); merged, it routes the request elsewhere than it was checked.
        .. Bytes("Host"),

        // Connection management: hop-by-hop fields that control the connection the body came on (RFC 9110 section 7.6.1,
        // RFC 9112 section 9); merged, they close, keep or switch the connection on a field sent after the body.
        .. Bytes("Connection", "Keep-Alive", "Proxy-Connection", "Upgrade", "TE"),
    ];

    /// <summary>True when <paramref name="name"/> (a token, any case) is a field a trailer section must not carry.</summary>
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
