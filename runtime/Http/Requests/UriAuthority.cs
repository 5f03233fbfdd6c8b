using System;
using System.Buffers;
using System.Numerics;

namespace Falconet.Http;

/// <summary>Validates a host and optional port, RFC 3986 uri-host [":" port], as a Host header or a request-target authority holds it.</summary>
/// <remarks>
/// The host is a reg-name (which includes every IPv4 address), or an IPv6 address or IPvFuture in brackets. The
/// checks run on bytes (the target) and on the Latin-1 characters of a header value alike, and never allocate.
/// </remarks>
internal static class UriAuthority
{
    // RFC 3986 section 3.2.2: reg-name = *( unreserved / pct-encoded / sub-delims ); these are all but the triplets.
    private static readonly SearchValues<char> s_regNameChars =
        SearchValues.Create("!$&'()*+,-.0123456789;=ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~");

    // Ports above 65535 do not exist; five digits bound the number without parsing it.
    private const int MaxPortDigits = 5;

    /// <summary>
    /// True for a valid Host header value (RFC 9112 section 3.2, RFC 9110 section 7.2): empty (the target has no
    /// authority), or a non-empty uri-host with an optional port.
    /// </summary>
    public static bool IsValidHostHeader(ReadOnlySpan<char> value)
    {
        // The common value is a plain name or address, sometimes with a port: one vector scan settles it.
        int end = value.IndexOfAnyExcept(s_regNameChars);
        if (end < 0)
        {
            return true;
        }

        if (end > 0 && value[end] == ':')
        {
            ReadOnlySpan<char> port = value[(end + 1)..];
            if (port.Length <= MaxPortDigits && AllDigits(port))
            {
                return true;
            }
        }

        return IsHostAndPort(value, requirePort: false);
    }

    /// <summary>True for uri-host [":" port] with a non-empty host (RFC 9110 section 4.2.1: an http URI never has an empty host).</summary>
    /// <param name="value">The authority, as bytes or as Latin-1 characters.</param>
    /// <param name="requirePort">True when the port must be present and non-empty (the CONNECT target).</param>
    public static bool IsHostAndPort<T>(ReadOnlySpan<T> value, bool requirePort)
        where T : unmanaged, IBinaryInteger<T>
    {
        int hostLength;
        if (!value.IsEmpty && Code(value[0]) == '[')
        {
            int close = IndexOf(value, ']');
            if (close < 0 || !IsIPLiteral(value[1..close]))
            {
                return false;
            }

            hostLength = close + 1;
        }
        else
        {
            hostLength = RegNameLength(value);
            if (hostLength <= 0)
            {
                return false;
            }
        }

        ReadOnlySpan<T> rest = value[hostLength..];
        if (rest.IsEmpty)
        {
            return !requirePort;
        }

        if (Code(rest[0]) != ':')
        {
            return false;
        }

        ReadOnlySpan<T> port = rest[1..];
        if (port.IsEmpty)
        {
            // RFC 3986 allows an empty port (it means the default); CONNECT needs a real one.
            return !requirePort;
        }

        if (port.Length > MaxPortDigits)
        {
            return false;
        }

        foreach (T digit in port)
        {
            if (!IsDigit(Code(digit)))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>The length of the reg-name at the start of <paramref name="value"/> (up to a ':' or the end); -1 when it holds an invalid byte.</summary>
    private static int RegNameLength<T>(ReadOnlySpan<T> value)
        where T : unmanaged, IBinaryInteger<T>
    {
        int i = 0;
        while (i < value.Length)
        {
            uint c = Code(value[i]);
            if (c == ':')
            {
                break;
            }

            if (c == '%')
            {
                if (i + 2 >= value.Length || !IsHexDigit(Code(value[i + 1])) || !IsHexDigit(Code(value[i + 2])))
                {
                    return -1;
                }

                i += 3;
                continue;
            }

            if (!IsRegNameChar(c))
            {
                return -1;
            }

            i++;
        }

        return i;
    }

    /// <summary>IP-literal without its brackets: an IPv6 address, or IPvFuture ("v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )).</summary>
    private static bool IsIPLiteral<T>(ReadOnlySpan<T> value)
        where T : unmanaged, IBinaryInteger<T>
    {
        if (value.IsEmpty)
        {
            return false;
        }

        if ((Code(value[0]) | 0x20) != 'v')
        {
            return IsIPv6(value);
        }

        int dot = IndexOf(value, '.');
        if (dot < 2 || dot == value.Length - 1)
        {
            return false;
        }

        foreach (T c in value[1..dot])
        {
            if (!IsHexDigit(Code(c)))
            {
                return false;
            }
        }

        foreach (T c in value[(dot + 1)..])
        {
            uint code = Code(c);
            if (code != ':' && !IsRegNameChar(code))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>
    /// RFC 3986 IPv6address: eight groups of 1 to 4 hex digits separated by ':', one "::" standing for one or more
    /// zero groups, and optionally an IPv4 address as the last two groups.
    /// </summary>
    private static bool IsIPv6<T>(ReadOnlySpan<T> value)
        where T : unmanaged, IBinaryInteger<T>
    {
        int groups = 0;
        bool compressed = false;
        int i = 0;
        if (value.Length >= 2 && Code(value[0]) == ':')
        {
            if (Code(value[1]) != ':')
            {
                return false;
            }

            compressed = true;
            i = 2;
        }

        while (i < value.Length)
        {
            int start = i;
            while (i < value.Length && i - start < 4 && IsHexDigit(Code(value[i])))
            {
                i++;
            }

            if (i < value.Length && Code(value[i]) == '.')
            {
                // The IPv4 tail ends the address and counts as two groups.
                if (!IsIPv4(value[start..]))
                {
                    return false;
                }

                groups += 2;
                break;
            }

            if (i == start)
            {
                return false;
            }

            groups++;
            if (i == value.Length)
            {
                break;
            }

            if (Code(value[i]) != ':')
            {
                return false;
            }

            i++;
            if (i < value.Length && Code(value[i]) == ':')
            {
                if (compressed)
                {
                    return false;
                }

                compressed = true;
                i++;
            }
            else if (i == value.Length)
            {
                // A single trailing colon.
                return false;
            }
        }

        return compressed ? groups < 8 : groups == 8;
    }

    /// <summary>RFC 3986 IPv4address: four dec-octets (0 to 255, no leading zero) separated by dots.</summary>
    private static bool IsIPv4<T>(ReadOnlySpan<T> value)
        where T : unmanaged, IBinaryInteger<T>
    {
        int octets = 0;
        int i = 0;
        while (true)
        {
            int start = i;
            int number = 0;
            while (i < value.Length && i - start < 3 && IsDigit(Code(value[i])))
            {
                number = (number * 10) + (int)(Code(value[i]) - '0');
                i++;
            }

            int digits = i - start;
            if (digits == 0 || number > 255 || (digits > 1 && Code(value[start]) == '0'))
            {
                return false;
            }

            octets++;
            if (i == value.Length)
            {
                return octets == 4;
            }

            if (octets == 4 || Code(value[i]) != '.')
            {
                return false;
            }

            i++;
        }
    }

    private static uint Code<T>(T value)
        where T : unmanaged, IBinaryInteger<T>
        => uint.CreateTruncating(value);

    private static int IndexOf<T>(ReadOnlySpan<T> value, char c)
        where T : unmanaged, IBinaryInteger<T>
    {
        for (int i = 0; i < value.Length; i++)
        {
            if (Code(value[i]) == c)
            {
                return i;
            }
        }

        return -1;
    }

    private static bool IsRegNameChar(uint c) => c < 0x80 && s_regNameChars.Contains((char)c);

    private static bool IsDigit(uint c) => c - '0' <= 9;

    // A plain loop over at most five characters: the generic span range search (ContainsAnyExceptInRange<char>) was
    // measured boxing a char on every request in the server (21 to 32 bytes per request under wrk, whose Host has a port).
    private static bool AllDigits(ReadOnlySpan<char> value)
    {
        foreach (char c in value)
        {
            if (!IsDigit(c))
            {
                return false;
            }
        }

        return true;
    }

    private static bool IsHexDigit(uint c) => c - '0' <= 9 || (c | 0x20) - 'a' <= 5;
}
