using System;
using System.Globalization;
using Falconet.Text;
using Microsoft.Extensions.Primitives;

namespace Falconet.Http;

/// <summary>
/// Reads the lists of the forwarding headers (<c>X-Forwarded-For</c>, <c>-Proto</c>, <c>-Host</c> and RFC 7239
/// <c>Forwarded</c>) from the nearest proxy back, without allocating: entries are spans of the header's own strings.
/// </summary>
internal static class ForwardedValues
{
    private const int MaxPortDigits = 5;

    /// <summary>The scheme an entry names: the shared "http" or "https", or null for anything else.</summary>
    public static string? ParseScheme(ReadOnlySpan<char> value)
        => value.Equals("https", StringComparison.OrdinalIgnoreCase) ? "https"
            : value.Equals("http", StringComparison.OrdinalIgnoreCase) ? "http"
            : null;

    /// <summary>
    /// Splits a node (an <c>X-Forwarded-For</c> entry, or the value of RFC 7239's <c>for</c>) into its address text and port:
    /// <c>192.0.2.7</c>, <c>192.0.2.7:4711</c>, <c>[2001:db8::7]</c>, <c>[2001:db8::7]:4711</c>, and, in
    /// <c>X-Forwarded-For</c> only, a bare <c>2001:db8::7</c>. RFC 7239's <c>unknown</c> and obfuscated (<c>_</c>) identifiers
    /// are valid and set <paramref name="unknown"/>; an obfuscated port leaves the port 0. False for anything else.
    /// </summary>
    public static bool TryParseNode(ReadOnlySpan<char> node, bool rfc7239, out ReadOnlySpan<char> address, out int port, out bool unknown)
    {
        address = default;
        port = 0;
        unknown = false;
        ReadOnlySpan<char> rest;
        int nameEnd = node.IndexOf(':');
        ReadOnlySpan<char> name = nameEnd < 0 ? node : node[..nameEnd];
        if (rfc7239 && (name.Equals("unknown", StringComparison.OrdinalIgnoreCase) || (name.Length > 1 && name[0] == '_' && IsObfuscated(name[1..]))))
        {
            unknown = true;
            rest = nameEnd < 0 ? default : node[nameEnd..];
        }
        else if (!node.IsEmpty && node[0] == '[')
        {
            int close = node.IndexOf(']');
            if (close < 0)
            {
                return false;
            }

            address = node[1..close];
            rest = node[(close + 1)..];
            if (!IsIPv6(address))
            {
                return false;
            }
        }
        else
        {
            if (nameEnd >= 0 && node[(nameEnd + 1)..].Contains(':'))
            {
                // Two colons or more: an IPv6 address without brackets, which only X-Forwarded-For has.
                address = node;
                return !rfc7239 && IsIPv6(node);
            }

            address = name;
            rest = nameEnd < 0 ? default : node[nameEnd..];
            if (!IsIPv4(address))
            {
                return false;
            }
        }

        if (rest.IsEmpty)
        {
            return true;
        }

        if (rest[0] != ':' || rest.Length == 1)
        {
            return false;
        }

        rest = rest[1..];
        if (rfc7239 && rest[0] == '_')
        {
            return IsObfuscated(rest[1..]);
        }

        return rest.Length <= MaxPortDigits && IsDigits(rest)
            && int.TryParse(rest, NumberStyles.None, CultureInfo.InvariantCulture, out port) && port <= 65535;
    }

    /// <summary>
    /// Reads one RFC 7239 element (<c>for=192.0.2.60;proto=http;by=203.0.113.43</c>): the values of <c>for</c>, <c>proto</c>
    /// and <c>host</c>, unquoted (empty when absent). Other parameters are ignored, as the RFC allows extensions. False when a
    /// pair is not token "=" (token / quoted-string), or a parameter occurs twice.
    /// </summary>
    public static bool TryParseElement(ReadOnlySpan<char> element, out ReadOnlySpan<char> forValue, out ReadOnlySpan<char> proto, out ReadOnlySpan<char> host)
    {
        forValue = proto = host = default;
        bool hasFor = false, hasProto = false, hasHost = false;
        while (!element.IsEmpty)
        {
            int end = IndexOfOutsideQuotes(element, ';');
            ReadOnlySpan<char> pair = (end < 0 ? element : element[..end]).Trim(" \t");
            element = end < 0 ? default : element[(end + 1)..];
            if (pair.IsEmpty)
            {
                continue;
            }

            int equals = pair.IndexOf('=');
            if (equals <= 0 || !IsToken(pair[..equals]) || !TryUnquote(pair[(equals + 1)..], out ReadOnlySpan<char> value))
            {
                return false;
            }

            ReadOnlySpan<char> name = pair[..equals];
            if (name.Equals("for", StringComparison.OrdinalIgnoreCase))
            {
                if (!Take(ref hasFor, value, ref forValue))
                {
                    return false;
                }
            }
            else if (name.Equals("proto", StringComparison.OrdinalIgnoreCase))
            {
                if (!Take(ref hasProto, value, ref proto))
                {
                    return false;
                }
            }
            else if (name.Equals("host", StringComparison.OrdinalIgnoreCase))
            {
                if (!Take(ref hasHost, value, ref host))
                {
                    return false;
                }
            }
            else if (name.Equals("by", StringComparison.OrdinalIgnoreCase))
            {
                // Names the proxy's own interface: nothing to apply.
            }
        }

        return true;

        static bool Take(ref bool seen, ReadOnlySpan<char> value, ref ReadOnlySpan<char> slot)
        {
            if (seen)
            {
                return false;
            }

            seen = true;
            slot = value;
            return true;
        }
    }

    private static bool TryUnquote(ReadOnlySpan<char> value, out ReadOnlySpan<char> unquoted)
    {
        if (!value.IsEmpty && value[0] == '"')
        {
            // The list reader refused backslashes already, so a quoted-string here has no quoted-pair.
            unquoted = value.Length >= 2 && value[^1] == '"' ? value[1..^1] : default;
            return value.Length >= 2 && value[^1] == '"' && !unquoted.Contains('"');
        }

        unquoted = value;
        return IsToken(value);
    }

    private static int IndexOfOutsideQuotes(ReadOnlySpan<char> value, char separator)
    {
        bool quoted = false;
        for (int i = 0; i < value.Length; i++)
        {
            char c = value[i];
            if (c == '"')
            {
                quoted = !quoted;
            }
            else if (c == separator && !quoted)
            {
                return i;
            }
        }

        return -1;
    }

    private static bool IsToken(ReadOnlySpan<char> value)
    {
        if (value.IsEmpty)
        {
            return false;
        }

        foreach (char c in value)
        {
            if (c >= 0x80 || !HttpCharacters.IsTokenChar((byte)c))
            {
                return false;
            }
        }

        return true;
    }

    // RFC 7239 section 6.3: obfnode = "_" 1*( ALPHA / DIGIT / "." / "_" / "-" ), and obfport the same.
    private static bool IsObfuscated(ReadOnlySpan<char> value)
    {
        if (value.IsEmpty)
        {
            return false;
        }

        foreach (char c in value)
        {
            if (!(char.IsAsciiLetterOrDigit(c) || c is '.' or '_' or '-'))
            {
                return false;
            }
        }

        return true;
    }

    // Four decimal parts of one to three digits without a leading zero, each at most 255: the dotted-quad form only (the shorter and octal or
    // hexadecimal forms that IPAddress also parses are not addresses a proxy writes, and would let a value pass as another).
    private static bool IsIPv4(ReadOnlySpan<char> value)
    {
        int parts = 0;
        while (true)
        {
            int dot = value.IndexOf('.');
            ReadOnlySpan<char> part = dot < 0 ? value : value[..dot];
            if (part.Length is 0 or > 3 || (part.Length > 1 && part[0] == '0') || !IsDigits(part)
                || int.Parse(part, NumberStyles.None, CultureInfo.InvariantCulture) > 255)
            {
                return false;
            }

            parts++;
            if (dot < 0)
            {
                return parts == 4;
            }

            value = value[(dot + 1)..];
        }
    }

    // The characters of an IPv6 address (an embedded IPv4 tail included, no zone): the address itself is parsed after.
    private static bool IsIPv6(ReadOnlySpan<char> value)
        => value.Length is >= 2 and <= 45 && value.Contains(':') && !value.ContainsAnyExcept("0123456789abcdefABCDEF:.");

    // A plain loop, not ContainsAnyExceptInRange: that generic boxes its bounds in unoptimized (tier-0) code, about 100 B a call
    // here, and a busy process can run tier-0 code for thousands of requests before the optimized version replaces it.
    private static bool IsDigits(ReadOnlySpan<char> value)
    {
        if (value.IsEmpty)
        {
            return false;
        }

        foreach (char c in value)
        {
            if (!char.IsAsciiDigit(c))
            {
                return false;
            }
        }

        return true;
    }
}

/// <summary>
/// The entries of a comma-separated header list from the last to the first, over every field line of the header (the last
/// line first): the order in which proxies appended them, nearest first. Empty entries are skipped (RFC 9110 section 5.6.1);
/// an entry with a backslash or an unbalanced quote is returned as malformed.
/// </summary>
internal ref struct ForwardedListReader
{
    private readonly StringValues _lines;
    private int _line;
    private int _end;

    public ForwardedListReader(StringValues lines)
    {
        _lines = lines;
        _line = lines.Count - 1;
        _end = _line >= 0 ? lines[_line]!.Length : 0;
    }

    /// <summary>The next entry to the left, trimmed of whitespace; false when there is none. <paramref name="malformed"/> says the entry cannot be read.</summary>
    public bool TryReadPrevious(out ReadOnlySpan<char> entry, out bool malformed)
    {
        while (_line >= 0)
        {
            string line = _lines[_line]!;
            bool quoted = false;
            malformed = false;
            int i = _end - 1;
            for (; i >= 0; i--)
            {
                char c = line[i];
                if (c == '"')
                {
                    quoted = !quoted;
                }
                else if (c == '\\')
                {
                    malformed = true;
                }
                else if (c == ',' && !quoted)
                {
                    break;
                }
            }

            entry = line.AsSpan(i + 1, _end - (i + 1)).Trim(" \t");
            if (i >= 0)
            {
                _end = i;
            }
            else
            {
                _line--;
                _end = _line >= 0 ? _lines[_line]!.Length : 0;
            }

            malformed |= quoted;
            if (!entry.IsEmpty || malformed)
            {
                return true;
            }
        }

        entry = default;
        malformed = false;
        return false;
    }
}
