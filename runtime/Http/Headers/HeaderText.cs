using System;
using System.Buffers;
using System.Buffers.Text;
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

    /// <summary>Writes precomputed "\r\nName: " bytes and a value as Latin-1, with one GetSpan and one Advance.</summary>
    public static void WriteHeader<TWriter>(ref TWriter writer, ReadOnlySpan<byte> prefix, string? value)
        where TWriter : IBufferWriter<byte>
    {
        value ??= string.Empty;
        if (!IsValidFieldValue(value))
        {
            // The prefix is "\r\nName: ": the name is decoded only to say which header failed.
            throw new InvalidOperationException("The value of response header '" + Encoding.ASCII.GetString(prefix[2..^2]) + "' contains a character that cannot be written.");
        }

        int length = prefix.Length + value.Length;
        Span<byte> destination = writer.GetSpan(length);
        prefix.CopyTo(destination);
        Encoding.Latin1.GetBytes(value, destination[prefix.Length..]);
        writer.Advance(length);
    }

    /// <summary>Writes "\r\nName: value" for a header outside the schema.</summary>
    public static void WriteUnknownHeader<TWriter>(ref TWriter writer, string name, string? value)
        where TWriter : IBufferWriter<byte>
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

        int length = 4 + name.Length + value.Length;
        Span<byte> destination = writer.GetSpan(length);
        destination[0] = (byte)'\r';
        destination[1] = (byte)'\n';
        Encoding.ASCII.GetBytes(name, destination[2..]);
        destination[2 + name.Length] = (byte)':';
        destination[3 + name.Length] = (byte)' ';
        Encoding.Latin1.GetBytes(value, destination[(4 + name.Length)..]);
        writer.Advance(length);
    }

    /// <summary>Writes "\r\nContent-Length: " and the digits of <paramref name="value"/>.</summary>
    public static void WriteContentLength<TWriter>(ref TWriter writer, long value)
        where TWriter : IBufferWriter<byte>
    {
        ReadOnlySpan<byte> prefix = "\r\nContent-Length: "u8;
        Span<byte> destination = writer.GetSpan(prefix.Length + 20);
        prefix.CopyTo(destination);
        Utf8Formatter.TryFormat(value, destination[prefix.Length..], out int written);
        writer.Advance(prefix.Length + written);
    }
}
