using System.Collections.Generic;
using Microsoft.Extensions.Primitives;
using Shouldly;

namespace Falconet.Generated.Tests;

/// <summary>Assertions shared by the collection tests.</summary>
internal static class HeaderAssert
{
    /// <summary>Count and the number of enumerated headers both equal <paramref name="expected"/>.</summary>
    public static void HasCount(IDictionary<string, StringValues> headers, int expected)
    {
        int enumerated = 0;
        foreach (KeyValuePair<string, StringValues> pair in headers)
        {
            enumerated++;
        }

        headers.Count.ShouldBe(expected);
        enumerated.ShouldBe(expected);
    }
}
