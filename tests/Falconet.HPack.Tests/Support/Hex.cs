using System;

namespace Falconet.HPack.Tests.Support;

/// <summary>Hex dumps as RFC 7541 prints them ("8286 8441 0f77 ..."), with any whitespace.</summary>
internal static class Hex
{
    public static byte[] Bytes(string hex)
    {
        string digits = string.Concat(hex.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries));
        return Convert.FromHexString(digits);
    }

    public static string Text(ReadOnlySpan<byte> bytes) => Convert.ToHexString(bytes).ToLowerInvariant();
}
