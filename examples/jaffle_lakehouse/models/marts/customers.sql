select c.customer_id, c.first_name, c.last_name,
       count(o.order_id) as order_count,
       min(o.order_date) as first_order,
       max(o.order_date) as most_recent_order,
       coalesce(sum(o.amount), 0) as lifetime_value
from {{ ref('stg_customers') }} c
left join {{ ref('orders') }} o on o.customer_id = c.customer_id
group by c.customer_id, c.first_name, c.last_name
