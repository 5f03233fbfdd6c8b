using System;
using System.Collections.Immutable;
using System.Text;

namespace Falconet.Generator.Planning;

/// <summary>Turns HTTP names into C# member names: PascalCase words split at every character that is not a letter or digit.</summary>
internal static class MemberNames
{
    /// <summary>
    /// Members a header's typed property must not take: the accessible members of the runtime's collection classes it
    /// derives from or extends (HeaderCollection, RequestHeaderCollection, ResponseHeaderCollection), of object, and the
    /// static members and type names of the generated collections. Private members of the runtime need no entry; its
    /// internal ones do, since the runtime's own generated collections are compiled beside them.
    /// </summary>
    public static readonly ImmutableHashSet<string> ReservedHeaderMembers = ImmutableHashSet.Create(
        StringComparer.Ordinal,
        "Add", "Append", "Clear", "Contains", "ContainsKey", "ContentLength", "CopyTo", "Count", "Enumerator",
        "Equals", "Finalize", "GetEnumerator", "GetHashCode", "GetKnown", "GetType", "IndexOf", "IsReadOnly", "Item",
        "Keys", "KnownHeaderTable", "KnownValue", "MemberwiseClone", "PresentBits", "Remove", "RequestHeaders", "ResponseHeaders",
        "SetKnown", "Table", "ToString", "TryAppend", "TryAppendMatched", "TryGetValue", "UnknownHeaders", "Values");

    /// <summary>Members of the generated method enum that a method must not take.</summary>
    public static readonly ImmutableHashSet<string> ReservedMethodMembers = ImmutableHashSet.Create(StringComparer.Ordinal, "None", "Custom");

    /// <summary>
    /// "Sec-CH-UA" becomes SecChUa, "ETag" stays ETag, "traceparent" becomes Traceparent: each word starts upper case,
    /// an all-capital word continues in lower case, any other word keeps its case. A leading digit gets the prefix "_".
    /// </summary>
    public static string ToPascalCase(string name)
    {
        var builder = new StringBuilder(name.Length + 1);
        int i = 0;
        while (i < name.Length)
        {
            if (!char.IsLetterOrDigit(name[i]) || name[i] > '\u007F')
            {
                i++;
                continue;
            }

            int start = i;
            while (i < name.Length && name[i] <= '\u007F' && char.IsLetterOrDigit(name[i]))
            {
                i++;
            }

            AppendWord(builder, name.Substring(start, i - start));
        }

        if (builder.Length == 0)
        {
            // A token made only of punctuation ("~", "*"): spell its characters so the name stays unique and stable.
            foreach (char c in name)
            {
                builder.Append('X').Append(((int)c).ToString("X2", System.Globalization.CultureInfo.InvariantCulture));
            }
        }

        if (builder[0] >= '0' && builder[0] <= '9')
        {
            builder.Insert(0, '_');
        }

        return builder.ToString();
    }

    private static void AppendWord(StringBuilder builder, string word)
    {
        bool allCapitals = true;
        foreach (char c in word)
        {
            if (c >= 'a' && c <= 'z')
            {
                allCapitals = false;
                break;
            }
        }

        builder.Append(char.ToUpperInvariant(word[0]));
        for (int i = 1; i < word.Length; i++)
        {
            builder.Append(allCapitals ? char.ToLowerInvariant(word[i]) : word[i]);
        }
    }
}
