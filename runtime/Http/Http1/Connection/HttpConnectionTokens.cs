using System;
using Microsoft.Extensions.Primitives;

namespace Falconet.Http.Http1;

/// <summary>Reads the comma-separated tokens of Connection and Expect header values without allocating.</summary>
internal static class HttpConnectionTokens
{
    /// <summary>"keep-alive": a literal, so the same instance as the known value of Connection in every header set.</summary>
    public const string KeepAlive = "keep-alive";

    /// <summary>"close", as <see cref="KeepAlive"/>.</summary>
    public const string Close = "close";

    /// <summary>True when a Connection value lists "close".</summary>
    public static bool ContainsClose(StringValues values) => ContainsToken(values, Close);

    /// <summary>True when a Connection value lists "keep-alive".</summary>
    public static bool ContainsKeepAlive(StringValues values) => ContainsToken(values, KeepAlive);

    /// <summary>True when an Expect value is "100-continue".</summary>
    public static bool ContainsContinue(StringValues values) => ContainsToken(values, "100-continue");

    /// <summary>True when any value of <paramref name="values"/> lists <paramref name="token"/> (case-insensitive).</summary>
    public static bool ContainsToken(StringValues values, string token)
    {
        int count = values.Count;
        for (int i = 0; i < count; i++)
        {
            string? value = values[i];
            if (value is null)
            {
                continue;
            }

            ReadOnlySpan<char> rest = value;
            while (!rest.IsEmpty)
            {
                int comma = rest.IndexOf(',');
                ReadOnlySpan<char> item = (comma < 0 ? rest : rest[..comma]).Trim(" \t");
                if (item.Equals(token, StringComparison.OrdinalIgnoreCase))
                {
                    return true;
                }

                rest = comma < 0 ? ReadOnlySpan<char>.Empty : rest[(comma + 1)..];
            }
        }

        return false;
    }
}
