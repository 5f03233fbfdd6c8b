using System;
using System.Buffers;
using System.Globalization;
using System.Text;
using Falconet.Text;
using Microsoft.Extensions.Primitives;

namespace Falconet.Http;

/// <summary>Header values between bytes and strings: value reuse, Content-Length digits, and the checked writes of response headers.</summary>
internal static class HeaderText
{
    // Printable ASCII: the fast path of IsValidFieldValue (a SearchValues scan allocates nothing, even before tiering).
    private static readonly SearchValues<char> s_visibleAscii =
        SearchValues.Create(" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~");

    private static readonly SearchValues<char> s_tokenChars = SearchValues.Create(Encoding.ASCII.GetString(HttpCharacters.TokenChars));

    /// <summary>The string for a header value: a known value's shared string when the bytes are equal, else a new Latin-1 string.</summary>
    public static string GetValueString(ReadOnlySpan<byte> value, string[] knownValues)
    {
        foreach (string known in knownValues)
        {
            if (known.Length == value.Length && Latin1.Equals(value, known))
            {
                return known;
            }
        }

        return Encoding.Latin1.GetString(value);
    }

    /// <summary>Parses a Content-Length value: one or more ASCII digits that fit a <see cref="long"/>.</summary>
    public static bool TryParseContentLength(ReadOnlySpan<byte> value, out long result)
    {
        result = 0;
        if (value.IsEmpty)
        {
            return false;
        }

        foreach (byte b in value)
        {
            uint digit = (uint)(b - (byte)'0');
            if (digit > 9 || result > (long.MaxValue - digit) / 10)
            {
                result = 0;
                return false;
            }

            result = (result * 10) + digit;
        }

        return true;
    }

    /// <summary>Parses a Content-Length set through the dictionary surface.</summary>
    /// <exception cref="FormatException">Not a single value of one or more digits that fit a <see cref="long"/>.</exception>
    public static long ParseContentLength(StringValues value)
    {
        string? text = value.Count == 1 ? value[0] : null;
        long result = 0;
        bool valid = text is { Length: > 0 };
        if (valid)
        {
            foreach (char c in text!)
            {
                uint digit = (uint)(c - '0');
                if (digit > 9 || result > (long.MaxValue - digit) / 10)
                {
                    valid = false;
                    break;
                }

                result = (result * 10) + digit;
            }
        }

        if (!valid)
        {
            throw new FormatException("Content-Length must be a single value of one or more digits.");
        }

        return result;
    }

    public static string FormatContentLength(long value) => value.ToString(CultureInfo.InvariantCulture);

    /// <summary>True when <paramref name="value"/> can be written as a field value: no control character but HTAB, nothing above U+00FF.</summary>
    public static bool IsValidFieldValue(ReadOnlySpan<char> value)
    {
        if (value.IndexOfAnyExcept(s_visibleAscii) < 0)
        {
            return true;
        }

        foreach (char c in value)
        {
            if (c != '\t' && (c < ' ' || c == '\u007F' || c > '\u00FF'))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>The most bytes <see cref="WriteContentLength"/> writes: "\r\nContent-Length: " and up to 19 digits.</summary>
    public const int MaxContentLengthLine = 18 + 19;

    /// <summary>The length of a known header's value, once it is known to be writable.</summary>
    /// <exception cref="InvalidOperationException">The value holds a character that cannot be written.</exception>
    public static int CheckValue(ReadOnlySpan<byte> prefix, string? value)
    {
        if (value is null)
        {
            return 0;
        }

        if (!IsValidFieldValue(value))
        {
            // The prefix is "\r\nName: ": the name is decoded only to say which header failed.
            throw new InvalidOperationException("The value of response header '" + Encoding.ASCII.GetString(prefix[2..^2]) + "' contains a character that cannot be written.");
        }

        return value.Length;
    }

    /// <summary>The length of "\r\nName: value" for a header outside the schema, once it is known to be writable.</summary>
    /// <exception cref="InvalidOperationException">The name is not a token, or the value holds a character that cannot be written.</exception>
    public static int CheckUnknown(string name, string? value)
    {
        value ??= string.Empty;
        if (name.Length == 0 || name.AsSpan().IndexOfAnyExcept(s_tokenChars) >= 0)
        {
            throw new InvalidOperationException("The response header name '" + name + "' is not a valid token.");
        }

        if (!IsValidFieldValue(value))
        {
            throw new InvalidOperationException("The value of response header '" + name + "' contains a character that cannot be written.");
        }

        return 4 + name.Length + value.Length;
    }

    /// <summary>Writes precomputed "\r\nName: " bytes and a value checked by <see cref="CheckValue"/> as Latin-1; returns the byte count.</summary>
    public static int WriteHeader(Span<byte> destination, ReadOnlySpan<byte> prefix, string? value)
    {
        prefix.CopyTo(destination);
        return prefix.Length + Encoding.Latin1.GetBytes(value.AsSpan(), destination[prefix.Length..]);
    }

    /// <summary>Writes "\r\nName: value" for a header outside the schema, checked by <see cref="CheckUnknown"/>; returns the byte count.</summary>
    public static int WriteUnknownHeader(Span<byte> destination, string name, string? value)
    {
        value ??= string.Empty;
        destination[0] = (byte)'\r';
        destination[1] = (byte)'\n';
        Encoding.ASCII.GetBytes(name, destination[2..]);
        destination[2 + name.Length] = (byte)':';
        destination[3 + name.Length] = (byte)' ';
        return 4 + name.Length + Encoding.Latin1.GetBytes(value, destination[(4 + name.Length)..]);
    }

    /// <summary>Writes "\r\nContent-Length: " and the digits of <paramref name="value"/>; returns the byte count.</summary>
    public static int WriteContentLength(Span<byte> destination, long value)
    {
        ReadOnlySpan<byte> prefix = "\r\nContent-Length: "u8;
        prefix.CopyTo(destination);
        int digits = CountDigits((ulong)value);
        Span<byte> text = destination.Slice(prefix.Length, digits);

        // Digit by digit from the end: a few instructions a digit, where the general formatter cost more than the copy of a
        // remembered head for the short lengths most responses have.
        ulong rest = (ulong)value;
        for (int i = digits - 1; i > 0; i--)
        {
            (rest, ulong digit) = Math.DivRem(rest, 10);
            text[i] = (byte)('0' + digit);
        }

        text[0] = (byte)('0' + rest);
        return prefix.Length + digits;
    }

    private static int CountDigits(ulong value)
    {
        int digits = 1;
        while (value >= 10)
        {
            value /= 10;
            digits++;
        }

        return digits;
    }
}
